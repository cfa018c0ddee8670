import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// Issue 45, points 3 and 4: GET / sends a browser to the panel and tells an API client where
// things are; an operator can turn demo tokens off.

describe('GET / and demo tokens on (the default)', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  it('redirects a browser (Accept: text/html) to the panel with 303', async () => {
    const res = await h.app.inject({
      method: 'GET',
      url: '/',
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/app/');
  });

  it('answers an API client the API’s 404, naming /v1, /docs and the panel', async () => {
    for (const accept of [undefined, 'application/json', '*/*']) {
      const res = await h.app.inject({ method: 'GET', url: '/', headers: accept ? { accept } : {} });
      expect(res.statusCode, String(accept)).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toEqual({
        error: 'not_found',
        message: expect.stringMatching(/\/v1.*\/docs.*\/app\//),
        request_id: expect.any(String),
      });
    }
  });
});

describe('EMEND_DEMO_TOKENS', () => {
  it('off: POST /v1/demo/token answers 404 not_found saying so, and the methods say demo: false', async () => {
    const h = await startHarness({ EMEND_DEMO_TOKENS: 'off' });
    try {
      const methods = (await h.app.inject({ method: 'GET', url: '/v1/auth/methods' })).json();
      expect(methods).toMatchObject({ token: true, demo: false });
      for (const url of ['/v1/demo/token', '/demo/token']) {
        const res = await h.app.inject({ method: 'POST', url, payload: { email: 'a@example.com' } });
        expect(res.statusCode).toBe(404);
        expect(res.json()).toEqual({
          error: 'not_found',
          message: expect.stringContaining('EMEND_DEMO_TOKENS=off'),
          request_id: expect.any(String),
        });
      }
      const { auth } = await newAccount(h, { scm: false });
      expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json().server.demo_tokens).toBe(
        false,
      );
    } finally {
      await h.close();
    }
  });
});
