import { afterEach, describe, expect, it } from 'vitest';
import { remember } from '../../src/memory/repo-memory.js';
import { waitFor, waitForStatus } from '../support/engine.js';
import { CALC_REPO, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, postFixTask, runFixTask, startModelService } from '../support/model-service.js';

let svc: ModelService;
let calcUrl: string;
let otherUrl: string;

async function start() {
  svc = await startModelService();
  svc.h.github.createRepo('acme', 'calc', { files: CALC_REPO });
  svc.h.github.createRepo('acme', 'calc-fork', { files: CALC_REPO });
  calcUrl = `${svc.h.github.webUrl}/acme/calc`;
  otherUrl = `${svc.h.github.webUrl}/acme/calc-fork`;
  return svc;
}

afterEach(async () => {
  await svc?.close();
});

const LESSON = 'Never change the docstrings in calc/ops.py; reviewers keep them as written.';

describe('repo memory in the planner and fixer', { timeout: 150_000 }, () => {
  it('a lesson for the account and repository reaches the planner and fixer prompts, and not another repository’s or another account’s', async () => {
    await start();
    const { h, model } = svc;
    scriptCalcRun(model);
    const owner = await newAccount(h, { plan: 'free' });
    const stranger = await newAccount(h, { plan: 'free' });
    // the URL's spelling does not matter: memory is keyed on the repository
    const lessonId = await remember(h.deps, {
      accountId: owner.account.id,
      repo: calcUrl.replace('/acme/calc', '/ACME/Calc'),
      kind: 'lesson',
      content: { note: LESSON, prompt: 'fix add', files: ['calc/ops.py'], correct: 'partial' },
    });

    const mine = await runFixTask(h, owner.auth, calcUrl, 'done');
    const calls = () => model.calls.splice(0);
    const seen = calls();
    expect(seen.find((c) => stepOf(c) === 'planner')!.text).toContain(LESSON);
    expect(seen.find((c) => stepOf(c) === 'fixer')!.text).toContain(LESSON);
    expect(mine.byStep('planner')[0]!.output.memory_used).toEqual([lessonId]);
    expect(mine.byStep('fixer')[0]!.output.memory_used).toEqual([lessonId]);

    const elsewhere = await runFixTask(h, owner.auth, otherUrl, 'done');
    expect(calls().some((c) => c.text.includes(LESSON))).toBe(false);
    expect(elsewhere.byStep('planner')[0]!.output.memory_used).toEqual([]);

    const theirs = await runFixTask(h, stranger.auth, calcUrl, 'done');
    expect(calls().some((c) => c.text.includes(LESSON))).toBe(false);
    expect(theirs.byStep('planner')[0]!.output.memory_used).toEqual([]);
  });
});

describe('a kill during a model call', { timeout: 120_000 }, () => {
  it('aborts the call: the task is cancelled at once and the worker is free for the next task', async () => {
    await start();
    const { h, model } = svc;
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    // the first planner call never answers until the test ends
    model.enqueue(async () => {
      await held;
      return { status: 500 };
    });
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    const id = await postFixTask(h, auth, calcUrl);
    await waitFor('the planner to call the model', async () => model.calls.length > 0);
    const started = performance.now();
    const kill = await h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: auth });
    expect(kill.statusCode, kill.body).toBe(200);
    await waitForStatus(h, id, 'cancelled', 5_000);
    expect(performance.now() - started).toBeLessThan(2_000);
    await waitFor('the run to leave this process', async () => !h.deps.runs.has(id), 5_000);
    // concurrency 1: the next task can only run if the killed one let go of its slot
    const next = await runFixTask(h, auth, calcUrl, 'done');
    expect(next.task.status).toBe('done');
    release();
  });
});
