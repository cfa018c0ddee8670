import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { MANAGED_KEY, type ModelService, runFixTask, startModelService } from '../support/model-service.js';

/**
 * The secrets a real run handles (the operator's managed key, the account's own provider key,
 * its code-host token, its emend tokens) never reach what the account can read back: the SSE
 * log stream, the training export, the task, or the service's log lines. A pull-request run on
 * a private repository through the production steps uses every one of them.
 */

const BYOK_KEY = 'sk-byok-STREAMSECRET-0123456789abcdef';
const WRONG_KEY = 'sk-byok-WRONGSECRET-fedcba9876543210';

let svc: ModelService;
let base: string;
beforeAll(async () => {
  svc = await startModelService();
  svc.model.validKeys.add(BYOK_KEY);
  scriptCalcRun(svc.model);
  base = await svc.h.app.listen({ port: 0, host: '127.0.0.1' });
}, 120_000);
afterAll(() => svc?.close());

async function text(path: string, auth: Record<string, string>, accept?: string) {
  const res = await fetch(`${base}${path}`, { headers: { ...auth, ...(accept ? { accept } : {}) } });
  return { status: res.status, body: await res.text() };
}

async function post(path: string, auth: Record<string, string>, body: unknown) {
  const res = await fetch(`${base}${path}`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  expect(res.status, `${path}: ${await res.clone().text()}`).toBeLessThan(300);
  return res.json();
}

describe('secrets in streams and exports', () => {
  it('no secret in the SSE events, the training export, the task or the logs of a BYOK pull-request run and a ' +
    'failed one', {
    timeout: 240_000,
  }, async () => {
    const { h } = svc;
    const owner = await newAccount(h, { plan: 'pro', credits: 0 });
    h.github.createRepo(owner.scm!.login, 'calc', { files: CALC_REPO, private: true });
    await post('/v1/me/keys', owner.auth, { provider: 'openai', api_key: BYOK_KEY });
    await post('/v1/me/byok', owner.auth, { enabled: true });
    const pat = (await post('/v1/me/tokens', owner.auth, { name: 'export' })).token as string;

    const { task } = await runFixTask(h, owner.auth, `${h.github.webUrl}/${owner.scm!.login}/calc`, 'done');
    expect(task.pr_url).toMatch(/\/pull\/\d+$/);
    expect(task.byok).toBe(true);

    // a run whose own key the provider refuses: the error travels to the task, not the key
    const refused = await newAccount(h, { plan: 'pro', credits: 0 });
    h.github.createRepo(refused.scm!.login, 'calc', { files: CALC_REPO, private: true });
    await post('/v1/me/keys', refused.auth, { provider: 'openai', api_key: WRONG_KEY });
    await post('/v1/me/byok', refused.auth, { enabled: true });
    const failed = await runFixTask(h, refused.auth, `${h.github.webUrl}/${refused.scm!.login}/calc`, 'failed');

    const seen: Record<string, string> = {};
    for (const [who, id, auth] of [
      ['done', task.id, owner.auth],
      ['failed', failed.task.id, refused.auth],
    ] as const) {
      const stream = await text(`/v1/tasks/${id}/logs/stream`, auth, 'text/event-stream');
      expect(stream.status).toBe(200);
      // the stream replayed the run and ended: a check on an empty stream could not fail
      expect(stream.body).toContain('event: log');
      expect(stream.body).toMatch(/event: end\ndata: \{"status":"(done|failed)"\}/);
      seen[`${who} stream`] = stream.body;
      seen[`${who} task`] = (await text(`/v1/tasks/${id}`, auth)).body;
    }
    const exported = await text('/v1/me/training/export.jsonl', { authorization: `Bearer ${pat}` });
    expect(exported.status).toBe(200);
    expect(
      exported.body
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([task.id]);
    expect(exported.body).toContain('return a + b');
    seen.export = exported.body;
    seen.logs = h.logLines.join('\n');
    expect(seen['failed task']).toMatch(/401|key|unauthori[sz]ed/i);

    const secrets = {
      BYOK_KEY,
      WRONG_KEY,
      MANAGED_KEY,
      pat,
      ownerToken: owner.token,
      ownerScm: owner.scm!.token,
      refusedToken: refused.token,
      refusedScm: refused.scm!.token,
    };
    for (const [where, body] of Object.entries(seen)) {
      for (const [name, secret] of Object.entries(secrets)) {
        expect(body.includes(secret), `${name} in ${where}`).toBe(false);
        // nor a long piece of it (a key cut short in an error message)
        expect(body.includes(secret.slice(0, 16)), `${name} (first 16 characters) in ${where}`).toBe(false);
      }
    }
    // the keys were really used: the provider saw the account's own key and refused the wrong one
    expect(svc.model.calls.some((c) => c.key === BYOK_KEY)).toBe(true);
    expect(svc.model.calls.some((c) => c.key === WRONG_KEY)).toBe(true);
  });
});
