import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claimPeriodic } from '../../src/engine/periodic.js';
import { CALC_PROMPT, CALC_REPO, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, startModelService } from '../support/model-service.js';
import { mustOpen, openSse } from '../support/sse-client.js';

// The whole product once, over real HTTP: a fix task on a repository the fake GitHub hosts,
// the scripted model, the real sandbox and validator, the pull request, the credit.
let svc: ModelService;
let baseUrl: string;

beforeAll(async () => {
  svc = await startModelService();
  baseUrl = await svc.h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await svc.close();
});

describe('a fix task end to end', { timeout: 150_000 }, () => {
  it(
    'runs every step, streams each over SSE, opens a PR holding the fix, captures the credit; the worker later ' +
      'sees the merge',
    async () => {
      const { h, model } = svc;
      scriptCalcRun(model);
      const owner = await newAccount(h, { plan: 'pro', credits: 2 });
      h.github.createRepo('acme', 'calc', { files: CALC_REPO, collaborators: [owner.scm!.login] });
      const headers = { authorization: owner.auth.authorization, 'content-type': 'application/json' };

      const created = await fetch(`${baseUrl}/v1/tasks`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ prompt: CALC_PROMPT, repo_url: `${h.github.webUrl}/acme/calc` }),
      });
      expect(created.status).toBe(201);
      const task = (await created.json()) as { id: string; mode: string };
      expect(task.mode).toBe('pr');
      expect(((await (await fetch(`${baseUrl}/v1/me`, { headers })).json()) as { credits: number }).credits).toBe(1); // held

      const stream = mustOpen(
        await openSse(`${baseUrl}/v1/tasks/${task.id}/logs/stream`, {
          headers: { authorization: headers.authorization },
        }),
      );
      const end = await stream.waitFor((i) => i.kind === 'event' && i.event === 'end', 120_000);
      expect(end.kind === 'event' && JSON.parse(end.data)).toEqual({ status: 'done' });
      await stream.closed;
      const logs = stream
        .events()
        .filter((e) => e.event === 'log')
        .map((e) => JSON.parse(e.data) as { step: string; status: string });
      for (const step of ['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr']) {
        expect(
          logs.filter((l) => l.step === step).map((l) => l.status),
          step,
        ).toEqual(['running', 'done']);
      }
      const states = stream
        .events()
        .filter((e) => e.event === 'state')
        .map((e) => JSON.parse(e.data) as { status: string; pr_url: string | null });
      expect(states.at(-1)).toMatchObject({ status: 'done', pr_url: expect.stringContaining('/acme/calc/pull/1') });

      const got = (await (await fetch(`${baseUrl}/v1/tasks/${task.id}`, { headers })).json()) as {
        task: Record<string, unknown>;
      };
      expect(got.task).toMatchObject({
        status: 'done',
        pr_url: `${h.github.webUrl}/acme/calc/pull/1`,
        pr_merged: false,
      });
      expect(got.task.tokens_total).toBe(model.billed().input + model.billed().output);
      expect(got.task.cost_usd).toBeGreaterThan(0);
      const pull = h.github.pulls('acme', 'calc')[0]!;
      expect(h.github.files('acme', 'calc', pull.head.ref)['calc/ops.py']).toContain('return a + b');
      expect(h.github.files('acme', 'calc', 'main')['calc/ops.py']).toContain('return a - b');
      // every thinking step asked the model; the credit was captured, not returned
      expect(new Set(model.calls.map(stepOf))).toEqual(new Set(['planner', 'locator', 'inspector', 'fixer']));
      expect(((await (await fetch(`${baseUrl}/v1/me`, { headers })).json()) as { credits: number }).credits).toBe(1);

      // merge tracking runs in worker maintenance, once per period across workers
      h.github.mergePull('acme', 'calc', pull.number);
      await svc.worker.maintain();
      const merged = (await (await fetch(`${baseUrl}/v1/tasks/${task.id}`, { headers })).json()) as {
        task: Record<string, unknown>;
      };
      expect(merged.task).toMatchObject({ pr_merged: true, human_edit_after: false });
      expect(await claimPeriodic(h.deps, 'merge-tracking', h.deps.config.mergeCheckMs)).toBe(false);
      h.clock.advance(h.deps.config.mergeCheckMs);
      expect(await claimPeriodic(h.deps, 'merge-tracking', h.deps.config.mergeCheckMs)).toBe(true);
      expect(await claimPeriodic(h.deps, 'merge-tracking', h.deps.config.mergeCheckMs)).toBe(false);
    },
  );
});
