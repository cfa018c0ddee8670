import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

// The default policy (no EMEND_OUTBOUND_ALLOW): an account's base_url may not reach loopback,
// link-local, private or CGNAT addresses. The operator's own provider URLs (here the double on
// 127.0.0.1) are trusted. Allowed base_urls over HTTP: test/web/account.test.ts.
let h: Harness;
let model: ScriptedModel;
const KEY = 'sk-proj-outbound-0123456789';
const ALLOW_HINT = '; the operator can allow it with EMEND_OUTBOUND_ALLOW';

beforeAll(async () => {
  model = await startScriptedModel({ validKeys: [KEY] });
  h = await startHarness({
    OPENAI_BASE_URL: model.urls.openai,
    ANTHROPIC_BASE_URL: model.urls.anthropic,
    GOOGLE_BASE_URL: model.urls.google,
  });
});
afterAll(async () => {
  await h.close();
  await model.close();
});

describe('base_url and the outbound address policy', () => {
  it.each([
    ['http://127.0.0.1:11434/v1', `base_url resolves to 127.0.0.1, a loopback address${ALLOW_HINT}`],
    ['http://169.254.169.254/latest', `base_url resolves to 169.254.169.254, a link-local address${ALLOW_HINT}`],
    ['http://10.0.0.5:8000/v1', `base_url resolves to 10.0.0.5, a private (RFC 1918) address${ALLOW_HINT}`],
    ['http://192.168.1.20/v1', `base_url resolves to 192.168.1.20, a private (RFC 1918) address${ALLOW_HINT}`],
    ['http://[fd00::1]/v1', `base_url resolves to fd00::1, a private (unique local, fc00::/7) address${ALLOW_HINT}`],
    [
      'http://100.64.0.1/v1',
      `base_url resolves to 100.64.0.1, a carrier-grade NAT (100.64.0.0/10) address${ALLOW_HINT}`,
    ],
    [
      'http://[::ffff:169.254.169.254]/',
      `base_url (::ffff:a9fe:a9fe) resolves to 169.254.169.254, a link-local address${ALLOW_HINT}`,
    ],
  ])('POST /v1/me/keys refuses base_url %s with 400 naming the rule, and saves nothing', async (baseUrl, message) => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: auth,
      payload: { provider: 'openai', api_key: KEY, base_url: baseUrl },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'bad_request', message });
    expect((await h.app.inject({ method: 'GET', url: '/v1/me/keys', headers: auth })).json()).toEqual([]);
  });

  it('POST /v1/me/keys refuses a host name that resolves to loopback (localhost)', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: auth,
      payload: { provider: 'openai', api_key: KEY, base_url: 'http://localhost:11434/v1' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(
      /^base_url \(localhost\) resolves to (127\.0\.0\.1|::1), a loopback address; the operator can allow it with EMEND_OUTBOUND_ALLOW$/,
    );
  });

  it(
    'POST /v1/me/keys/test: the caller’s loopback base_url is a 400 and is never contacted; the operator’s ' +
      'endpoint is trusted',
    async () => {
      const { auth } = await newAccount(h, { plan: 'pro', scm: false });
      const before = model.requests.length;
      const own = await h.app.inject({
        method: 'POST',
        url: '/v1/me/keys/test',
        headers: auth,
        payload: { provider: 'openai', api_key: KEY, base_url: model.urls.openai },
      });
      expect(own.statusCode).toBe(400);
      expect(own.json()).toMatchObject({
        error: 'bad_request',
        message: `base_url resolves to 127.0.0.1, a loopback address${ALLOW_HINT}`,
      });
      expect(own.body).not.toContain(KEY);
      expect(model.requests.length).toBe(before);
      // no base_url: the operator's OPENAI_BASE_URL (the same double) is reached
      const operator = await h.app.inject({
        method: 'POST',
        url: '/v1/me/keys/test',
        headers: auth,
        payload: { provider: 'openai', api_key: KEY },
      });
      expect(operator.json()).toEqual({ ok: true, models: 3 });
      expect(model.requests.length).toBe(before + 1);
    },
  );
});
