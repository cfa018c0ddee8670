// Writes the OpenAPI document generated from the route schemas to openapi/openapi-public.yaml, and the
// API types generated from that document to packages/client/src/schema.d.ts (@emend/client; the panel
// re-exports them). The test suite fails when either is stale; run `npm run openapi` after changing a route.
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { openPglite } from '../src/db/client.js';
import { createLogger } from '../src/logger.js';
import { createRuntime } from '../src/runtime/runtime.js';
import { CLIENT_TYPES_FILE, panelTypes } from './openapi-types.js';

export const OPENAPI_FILE = new URL('../openapi/openapi-public.yaml', import.meta.url);

const config = loadConfig({ EMEND_SECRET_KEY: randomBytes(32).toString('hex') });
const database = await openPglite(undefined);
const runtime = await createRuntime(config, database, { log: createLogger('silent') });
const app = await buildApp(runtime.deps);
await app.ready();
const yaml = app.swagger({ yaml: true });
writeFileSync(OPENAPI_FILE, yaml);
writeFileSync(CLIENT_TYPES_FILE, await panelTypes(yaml));
await app.close();
await runtime.close();
await database.close();
console.log(`wrote ${OPENAPI_FILE.pathname} and ${CLIENT_TYPES_FILE.pathname}`);
