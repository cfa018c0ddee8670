// The API's types, generated once into @emend/client (`npm run openapi`); the panel uses the same file.
export type { components, operations, paths } from '../../../packages/client/src/schema';
