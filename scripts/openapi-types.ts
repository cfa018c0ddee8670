// The panel's API types, generated from the committed OpenAPI document with openapi-typescript.
// `npm run openapi` writes them; test/http/openapi.test.ts fails when the committed copy is stale.
import openapiTS, { COMMENT_HEADER, astToString } from 'openapi-typescript';

export const PANEL_TYPES_FILE = new URL('../web/src/api/schema.d.ts', import.meta.url);

/** TypeScript declarations (`paths`, `components`, `operations`) for an OpenAPI document in YAML. */
export async function panelTypes(openapiYaml: string): Promise<string> {
  const ast = await openapiTS(openapiYaml, { silent: true });
  return COMMENT_HEADER + astToString(ast);
}
