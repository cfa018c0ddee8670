import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

let h: Harness;
let model: ScriptedModel;
const PROVIDER_KEY = 'sk-live-SECRETSECRETSECRET-4242';

beforeAll(async () => {
  model = await startScriptedModel({ validKeys: [PROVIDER_KEY] });
  h = await startHarness({ OPENAI_BASE_URL: model.urls.openai, LOG_LEVEL: 'trace' });
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('a', 'b');
});
afterAll(async () => {
  await h.close();
  await model.close();
});

describe('secrets', () => {
  it('no token or provider key appears in any response (but the one-time creation) or any log line', async () => {
    const { token, auth } = await newAccount(h, { plan: 'pro', credits: 3, admin: true });
    const bodies: string[] = [];
    const call = async (method: 'GET' | 'POST' | 'DELETE' | 'PATCH', url: string, payload?: object, headers = auth) => {
      const res = await h.app.inject({ method, url, headers, payload });
      bodies.push(res.body);
      return res;
    };
    const minted = await h.app.inject({ method: 'POST', url: '/v1/me/tokens', headers: auth, payload: { name: 'ci' } });
    const pat = minted.json().token as string;
    const demo = (
      await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'd@example.com' } })
    ).json().token as string;
    await call('POST', '/v1/me/keys', { provider: 'openai', api_key: PROVIDER_KEY });
    await call('POST', '/v1/me/keys', { provider: 'google', api_key: 'x' });
    await call('POST', '/v1/me/keys/test', { provider: 'openai', api_key: PROVIDER_KEY });
    await call('POST', '/v1/me/keys/test', { provider: 'openai', api_key: `${PROVIDER_KEY}-wrong` });
    await call('GET', '/v1/me/keys');
    await call('GET', '/v1/me');
    await call('GET', '/v1/me/tokens');
    await call('POST', '/v1/tasks', { prompt: 'fix it', repo_url: 'https://github.com/a/b' });
    await call('GET', '/v1/tasks');
    await call('GET', '/v1/admin/accounts');
    await call('GET', '/v1/me', undefined, { authorization: `Bearer ${pat}` });
    await call('GET', '/v1/me', undefined, { authorization: `Bearer ${demo}` });
    await call('GET', '/v1/me', undefined, { authorization: `Bearer ${token}x` });
    await call('GET', '/v1/tasks', undefined, { authorization: `Bearer ${pat.slice(0, -2)}` });
    await call('POST', '/v1/me/keys', { provider: 'openai', api_key: PROVIDER_KEY, extra: 1 });
    await call('GET', '/metrics');
    const secrets = [token, pat, demo, PROVIDER_KEY, token.slice(3, 30), PROVIDER_KEY.slice(0, 20)];
    expect(h.logLines.length).toBeGreaterThan(20);
    for (const secret of secrets) {
      for (const body of bodies) expect(body).not.toContain(secret);
      for (const line of h.logLines) expect(line).not.toContain(secret);
    }
  });
});

describe('GET /metrics', () => {
  it('exposes process metrics, HTTP request counts and latency, and tasks by status', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 3 });
    await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: auth,
      payload: { prompt: 'fix it', repo_url: 'https://github.com/a/b' },
    });
    await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth });
    const res = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const text = res.body;
    expect(text).toMatch(/^emend_process_cpu_user_seconds_total \d/m);
    expect(text).toMatch(/^emend_http_requests_total\{method="GET",route="\/v1\/me",status="200"\} [1-9]/m);
    expect(text).toMatch(
      /^emend_http_request_duration_seconds_bucket\{le="0\.5",method="POST",route="\/v1\/tasks"\} [1-9]/m,
    );
    expect(text).toMatch(/^emend_tasks\{status="pending",task_type="fix",mode="pr"\} [1-9]/m);
    expect(text).toMatch(/^emend_queue_depth [1-9]/m);
    expect(text).toMatch(/^# TYPE emend_step_duration_seconds histogram/m);
    expect(text).toMatch(/^# TYPE emend_gate_waits_total counter/m);
    expect(text).toMatch(/^emend_tasks_created_total\{task_type="fix",mode="pr"\} [1-9]/m);
    expect(text).toMatch(/^emend_task_cost_usd_total 0/m);
  });
});
