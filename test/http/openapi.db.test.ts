import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { CLIENT_TYPES_FILE, PANEL_TYPES_FILE, panelTypes } from '../../scripts/openapi-types.js';
import { type Harness, startHarness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

// The endpoints the foundation and engine issues list; each must be documented under /v1 and served unprefixed too.
const ENDPOINTS = [
  ['post', '/tasks'],
  ['get', '/tasks'],
  ['get', '/tasks/{id}'],
  ['get', '/tasks/limits'],
  ['get', '/tasks/{id}/logs/stream'],
  ['post', '/tasks/{id}/approve'],
  ['post', '/tasks/{id}/kill'],
  ['post', '/tasks/{id}/continue'],
  ['get', '/me'],
  ['post', '/me/byok'],
  ['post', '/me/keys'],
  ['get', '/me/keys'],
  ['post', '/me/keys/test'],
  ['post', '/me/tokens'],
  ['get', '/me/tokens'],
  ['delete', '/me/tokens/{id}'],
  ['post', '/demo/token'],
  ['get', '/health'],
  ['get', '/metrics'],
  ['get', '/admin/accounts'],
  ['patch', '/admin/accounts/{id}'],
] as const;

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1.0 document, version 1.0.0', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/openapi-public.yaml' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('yaml');
    const doc = parse(res.body);
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const json = await h.app.inject({ method: 'GET', url: '/openapi-public.json' });
    expect(json.json()).toEqual(doc);
  });

  it('documents every endpoint under /v1, with the unprefixed alias served', async () => {
    const doc = h.app.swagger() as unknown as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    for (const [method, path] of ENDPOINTS) {
      expect(doc.paths[`/v1${path}`]?.[method], `${method} /v1${path}`).toBeDefined();
      const fastifyPath = path.replace(/\{(\w+)\}/g, ':$1');
      expect(h.app.hasRoute({ method: method.toUpperCase() as 'GET', url: fastifyPath }), `${method} ${path}`).toBe(
        true,
      );
      expect(h.app.hasRoute({ method: method.toUpperCase() as 'GET', url: `/v1${fastifyPath}` })).toBe(true);
    }
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/v1/'))).toBe(true);
  });

  it('is committed and current (run `npm run openapi` after changing a route)', async () => {
    const committed = readFileSync(new URL('../../openapi/openapi-public.yaml', import.meta.url), 'utf8');
    expect(committed).toBe(h.app.swagger({ yaml: true }));
  });

  it("the panel's API types are @emend/client's, not a second generated copy", () => {
    expect(readFileSync(PANEL_TYPES_FILE, 'utf8')).toContain(
      "export type { components, operations, paths } from '../../../packages/client/src/schema';",
    );
  });

  it("@emend/client's types are generated from the committed document and current", async () => {
    const committed = readFileSync(new URL('../../openapi/openapi-public.yaml', import.meta.url), 'utf8');
    const types = readFileSync(CLIENT_TYPES_FILE, 'utf8');
    expect(types).toContain('export interface paths');
    expect(types).toBe(await panelTypes(committed));
  });

  it('serves the interactive explorer at /docs', async () => {
    const res = await h.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('swagger-ui');
  });

  it('names each step output as a component schema generated from the step contract', async () => {
    const doc = parse((await h.app.inject({ method: 'GET', url: '/openapi-public.yaml' })).body);
    const schemas = doc.components.schemas;
    for (const name of ['PlannerOutput', 'LocatorOutput', 'InspectorOutput', 'FixerOutput', 'ValidatorOutput'])
      expect(schemas[name], name).toMatchObject({ type: 'object' });
    for (const name of ['PrOutput', 'SitePlannerOutput', 'SiteFixerOutput', 'SiteValidatorOutput'])
      expect(schemas[name], name).toMatchObject({ type: 'object' });
    expect(schemas.PlannerOutput.required).toEqual(expect.arrayContaining(['summary', 'steps', 'likely_files']));
    // A site's plan is its own shape: no summary or steps made up to look like a fix plan.
    expect(schemas.SitePlannerOutput.required).toEqual(expect.arrayContaining(['title', 'sections', 'palette']));
    expect(schemas.SitePlannerOutput.properties).not.toHaveProperty('summary');
    expect(schemas.SitePlannerOutput.properties).not.toHaveProperty('steps');
    const ajv = new Ajv2020({ strict: false });
    const pr = ajv.compile(schemas.PrOutput);
    const opened = {
      pr_url: 'https://github.com/a/b/pull/1',
      number: 1,
      branch: 'emend/1',
      head: 'emend/1',
      base: 'main',
      commit: 'abc',
      draft: false,
      drafts_disallowed: false,
      fork: null,
    };
    expect(pr(opened), JSON.stringify(pr.errors)).toBe(true);
    expect(pr({ ...opened, number: 'one' })).toBe(false);
  });
});
