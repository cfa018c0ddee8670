// The API types of @emend/client, generated from the committed OpenAPI document with openapi-typescript;
// the panel re-exports them (web/src/api/schema.d.ts). `npm run openapi` writes them;
// test/http/openapi.db.test.ts fails when the committed file is stale.
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';

export const CLIENT_TYPES_FILE = new URL('../packages/client/src/schema.d.ts', import.meta.url);
export const PANEL_TYPES_FILE = new URL('../web/src/api/schema.d.ts', import.meta.url);

/** TypeScript declarations (`paths`, `components`, `operations`) for an OpenAPI document in YAML. */
export async function panelTypes(openapiYaml: string): Promise<string> {
  const ast = await openapiTS(openapiYaml, { silent: true });
  return COMMENT_HEADER + astToString(ast);
}
