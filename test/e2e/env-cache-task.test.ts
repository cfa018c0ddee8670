import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, GOOD_FIX, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';
import { mustOpen, openSse } from '../support/sse-client.js';

// Cached environments through fix tasks: the setup's output reaches the task's SSE stream while
// the validator runs, and the second task on the same repository gets the environment the first
// one's base commit built (docs/environments.md, "Cached environments").

let svc: ModelService;
let baseUrl: string;

beforeAll(async () => {
  svc = await startModelService();
  baseUrl = await svc.h.app.listen({ host: '127.0.0.1', port: 0 });
  svc.h.github.createRepo('acme', 'cached-env', { files: CALC_REPO });
});
afterAll(async () => {
  await svc?.close();
});

describe('cached environments in fix tasks', { timeout: 180_000 }, () => {
  it('streams the setup output over SSE, and the second task hits the cache', async () => {
    const { h, model } = svc;
    const owner = await newAccount(h, { plan: 'pro', credits: 10 });
    const repo = `${h.github.webUrl}/acme/cached-env`;
    const patch = await h.app.inject({
      method: 'PATCH',
      url: `/v1/me/repos/settings?repo=${encodeURIComponent(repo)}`,
      headers: owner.auth,
      payload: { setup_command: 'mkdir -p build && echo made > build/stamp && echo STREAMED-SETUP-LINE' },
    });
    expect(patch.statusCode, patch.body).toBe(200);

    const setupOf = (out: unknown) => (out as { setup?: { environment?: { cache: string; key: string } } }).setup;
    scriptCalcRun(model, [GOOD_FIX]);
    const first = await runFixTask(h, owner.auth, repo, 'done');
    expect(setupOf(first.byStep('validator').at(-1)!.output)?.environment).toMatchObject({ cache: 'built' });
    const stream = mustOpen(
      await openSse(`${baseUrl}/v1/tasks/${first.task.id}/logs/stream`, {
        headers: { ...owner.auth, 'last-event-id': '0' },
      }),
    );
    await stream.waitFor((i) => i.kind === 'event' && i.event === 'end', 30_000);
    await stream.closed;
    const logEvents = stream.items
      .filter((i) => i.kind === 'event' && i.event === 'log')
      .map(
        (i) =>
          JSON.parse((i as { data: string }).data) as {
            step: string;
            status: string;
            output: { setup_output?: string };
          },
      );
    const streamed = logEvents.filter((e) => e.output.setup_output?.includes('STREAMED-SETUP-LINE'));
    // Only the base commit's setup ran (the change got its copy): one record, while the step was running.
    expect(streamed).toHaveLength(1);
    expect(streamed[0]).toMatchObject({ step: 'validator', status: 'running' });
    expect(logEvents.indexOf(streamed[0]!)).toBeLessThan(
      logEvents.findIndex((e) => e.step === 'validator' && e.status === 'done'),
    );

    scriptCalcRun(model, [GOOD_FIX]);
    const second = await runFixTask(h, owner.auth, repo, 'done');
    const again = setupOf(second.byStep('validator').at(-1)!.output);
    expect(again?.environment).toEqual({
      cache: 'hit',
      key: setupOf(first.byStep('validator').at(-1)!.output)?.environment?.key,
    });
    const metrics = await h.app.inject({ method: 'GET', url: '/metrics' });
    expect(metrics.body).toMatch(/^emend_env_cache_hits_total 1$/m);
  });
});
