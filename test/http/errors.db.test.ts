import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/errors.js';
import { STATUS_OF } from '../../src/http/errors.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ EMEND_BODY_LIMIT_BYTES: '4096' });
});
afterAll(() => h.close());

describe('error handling', () => {
  it('has one status for every code, matching the spec’s table', () => {
    expect(Object.keys(STATUS_OF).sort()).toEqual([...ERROR_CODES].sort());
    expect(STATUS_OF).toMatchObject({
      bad_request: 400,
      not_a_scm_url: 400,
      unauthorized: 401,
      invalid_token: 401,
      FREE_LIMIT_REACHED: 402,
      PRIVATE_REPO_REQUIRES_UPGRADE: 402,
      NO_CREDITS: 402,
      DEMO_LIMIT_REACHED: 402,
      DEMO_PUBLIC_REPOS_ONLY: 402,
      forbidden: 403,
      not_found: 404,
      scm_not_connected: 412,
      rate_limited: 429,
      CONCURRENT_LIMIT: 429,
      internal_error: 500,
    });
  });

  it('answers unknown routes 404 not_found in the error shape', async () => {
    for (const [method, url] of [
      ['GET', '/v1/nothing'],
      ['DELETE', '/v1/tasks'],
      ['GET', '/v2/tasks'],
    ] as const) {
      const res = await h.app.inject({ method, url });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ error: 'not_found', message: expect.any(String), request_id: expect.any(String) });
    }
  });

  it('answers malformed JSON 400, oversized bodies 413, other media types 415, without stack traces', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const json = { ...auth, 'content-type': 'application/json' };
    const malformed = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: json,
      payload: '{"prompt": "fix',
    });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json()).toMatchObject({ error: 'bad_request', message: expect.stringContaining('JSON') });
    const big = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: json,
      payload: JSON.stringify({ prompt: 'x'.repeat(5000) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toBe('payload_too_large');
    const text = await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().error).toBe('unsupported_media_type');
    const array = await h.app.inject({ method: 'POST', url: '/v1/tasks', headers: json, payload: '[1,2]' });
    expect(array.statusCode).toBe(400);
    for (const res of [malformed, big, text, array]) {
      expect(res.body).not.toMatch(/at .*\.(ts|js):\d+/);
      expect(res.json().request_id).toBe(res.headers['request-id'] ?? res.json().request_id);
    }
  });
  // Hostile input on every route: test/http/route-sweep.db.test.ts, generated from the route table.
});
