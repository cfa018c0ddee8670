import { afterAll, beforeAll, expect, it } from 'vitest';
import { ROUTE_ACTS, actOf } from '../../src/http/route-acts.js';
import { type Harness, startHarness } from '../support/harness.js';

/** The acts table names every authenticated route the app has, and nothing else. */
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

it('every route that is not public has an act, and every act listed is a route', () => {
  const authenticated = h.app.routeTable.filter((r) => r.access !== 'public');
  const missing = authenticated.filter((r) => !actOf(r.method, r.url)).map((r) => `${r.method} ${r.url}`);
  expect(missing).toEqual([]);
  const present = new Set(
    authenticated.map((r) => `${r.method === 'HEAD' ? 'GET' : r.method} ${r.url.replace(/^\/v1\//, '/')}`),
  );
  expect(Object.keys(ROUTE_ACTS).filter((k) => !present.has(k))).toEqual([]);
});
