import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { fakeDns } from '../support/fake-dns.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';

// A BYOK key whose base_url passed the save-time check (its name resolved to a public address)
// but resolves to 127.0.0.1 when the task calls it: the call is refused on the address it would
// connect to, and the step fails naming the rule, without retrying and without reaching the double.
let svc: ModelService;
const dns = fakeDns({ 'byok-model.test': ['93.184.216.34', '127.0.0.1'] });

beforeAll(async () => {
  svc = await startModelService({}, 'openai', { lookup: dns });
  svc.h.github.createRepo('acme', 'calc', { files: CALC_REPO });
});
afterAll(async () => {
  await svc.close();
});

describe('BYOK base_url at call time', { timeout: 150_000 }, () => {
  it('a base_url that now resolves to a loopback address fails the step with the reason', async () => {
    const { h, model } = svc;
    const byokKey = 'AIza-account-own-key-outbound';
    model.validKeys.add(byokKey);
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    const port = new URL(model.urls.google).port;
    const saved = await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: auth,
      payload: { provider: 'google', api_key: byokKey, base_url: `http://byok-model.test:${port}/google/v1beta` },
    });
    expect(saved.statusCode, saved.body).toBe(201);
    expect(
      (await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: true } }))
        .statusCode,
    ).toBe(200);
    const { task, byStep } = await runFixTask(h, auth, `${h.github.webUrl}/acme/calc`, 'failed');
    expect(task.error).toMatch(
      /^planner failed: google [\w.-]+: base_url \(byok-model\.test\) resolves to 127\.0\.0\.1, a loopback address; the operator can allow it with EMEND_OUTBOUND_ALLOW$/,
    );
    expect(byStep('planner')[0]!.status).toBe('failed');
    expect(model.calls).toHaveLength(0);
    expect(model.requests).toHaveLength(0);
    // refused is final: one resolution at save, one at the call, no retries
    expect(dns.asked).toEqual(['byok-model.test', 'byok-model.test']);
    expect(h.logLines.some((l) => l.includes('retrying'))).toBe(false);
    expect(task.tokens_total).toBe(0);
  });
});
