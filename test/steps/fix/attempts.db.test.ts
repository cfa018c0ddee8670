import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditLedger, tasks } from '../../../src/db/schema.js';
import { waitForStatus } from '../../support/engine.js';
import { CALC_REPO, GOOD_FIX, calcStepReply, editBlock, scriptCalcRun, stepOf } from '../../support/fix-script.js';
import { newAccount } from '../../support/harness.js';
import {
  type Log,
  type ModelService,
  postFixTask,
  runFixTask,
  startModelService,
} from '../../support/model-service.js';
import type { ModelRequest, Reply } from '../../support/scripted-model/server.js';

/**
 * A fix task's attempts (docs/agent.md, "Attempts") end to end: the scripted model over real HTTP
 * answers each attempt by the temperature its request carries (0, 0.5 and 1 for three), the fixer
 * runs in a tree of its own per attempt, the real validator judges each in the sandbox, and the
 * best-ranked change goes on to the gates, the pull request or the preview.
 */

let svc: ModelService;
beforeAll(async () => {
  svc = await startModelService({ EMEND_AGENT_COMMAND_S: '900' });
});
afterAll(() => svc.close());

/** add() fixed, mul() broken: a new failure (tests/test_ops.py::test_mul). */
const BREAKS_MUL = editBlock(
  'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b',
  'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n\n\ndef mul(a, b):\n    return a + b',
);
/** add() fixed, mul() broken another way. */
const POWERS_MUL = editBlock('def mul(a, b):\n    return a * b', 'def mul(a, b):\n    return a ** b').concat(
  editBlock('    return a - b', '    return a + b'),
);
/** Only mul() broken: the smallest wrong change. */
const ONLY_MUL = editBlock('def mul(a, b):\n    return a * b', 'def mul(a, b):\n    return a - b');

const temperatureOf = (req: ModelRequest) => (req.body as { temperature?: number }).temperature;
const isRetry = (req: ModelRequest) => req.text.includes('did not pass validation');

/** The fixer's answer by the attempt's temperature; a retry after a failed verdict answers from `retries`. */
function scriptAttempts(byTemperature: Record<string, string>, retries: string[] = [GOOD_FIX]) {
  let retry = 0;
  const from = svc.model.calls.length;
  scriptCalcRun(svc.model, (req): Reply => {
    if (isRetry(req)) return { text: retries[Math.min(retry++, retries.length - 1)]! };
    return { text: byTemperature[String(temperatureOf(req))] ?? GOOD_FIX };
  });
  // The fixer's calls since: the service (and its model double) serve every test of the file.
  return { fixerCalls: () => svc.model.calls.slice(from).filter((c) => stepOf(c) === 'fixer') };
}

/** The lines a diff changes, its headers left out. */
const changedLines = (diff: string) => diff.split('\n').filter((l) => /^[-+](?![-+]{2})/.test(l));

async function calcRepo(name: string, plan: 'free' | 'pro' = 'pro') {
  const owner = await newAccount(svc.h, { plan, credits: 5 });
  svc.h.github.createRepo('acme', name, { files: CALC_REPO, collaborators: [owner.scm!.login] });
  return { owner, repoUrl: `${svc.h.github.webUrl}/acme/${name}` };
}

const allLogs = async (id: string, auth: Record<string, string>) =>
  (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().logs as (Log & {
    input: Record<string, unknown>;
  })[];

interface Attempt {
  attempt: number;
  temperature: number;
  status: string;
  passed: boolean | null;
  chosen: boolean;
  diff: string;
  diff_summary: string;
  new_failures: string[];
  tokens: number;
  cost_usd: number;
  fixer: string;
}

const post = (auth: Record<string, string>, payload: Record<string, unknown>) =>
  svc.h.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: { ...auth, 'content-type': 'application/json' },
    payload,
  });

describe('several attempts, the validator choosing', { timeout: 240_000 }, () => {
  it('three attempts, one right: that one is chosen, every attempt and the reason are shown, costs summed', async () => {
    const { owner, repoUrl } = await calcRepo('calc-attempts');
    const { fixerCalls } = scriptAttempts({ '0': BREAKS_MUL, '0.5': GOOD_FIX, '1': POWERS_MUL });
    const { task, byStep } = await runFixTask(svc.h, owner.auth, repoUrl, 'done', { attempts: 3 });
    expect(task.attempts).toBe(3);
    expect(task.retry_count).toBe(0);
    expect(task.pr_url).toBeTruthy();
    // Three fixer runs, one per attempt, each at its own temperature.
    expect(
      fixerCalls()
        .map(temperatureOf)
        .sort((a, b) => (a ?? 0) - (b ?? 0)),
    ).toEqual([0, 0.5, 1]);
    const [fixer] = byStep('fixer');
    const attempts = fixer!.output.attempts as Attempt[];
    expect(attempts.map((a) => [a.attempt, a.temperature, a.status, a.passed, a.chosen, a.fixer])).toEqual([
      [1, 0, 'validated', false, false, 'pipeline'],
      [2, 0.5, 'validated', true, true, 'pipeline'],
      [3, 1, 'validated', false, false, 'pipeline'],
    ]);
    expect(attempts[0]!.new_failures).toEqual(['tests/test_ops.py::test_mul']);
    expect(fixer!.output.choice).toEqual({
      attempt: 2,
      reason: 'attempt 2: its validation passed (attempt 1: failed)',
    });
    // The chosen change is the task's; the others' diffs stay readable.
    expect(fixer!.output.diff).toBe(attempts[1]!.diff);
    expect(task.diff_summary).toBe(attempts[1]!.diff);
    expect(attempts[0]!.diff).toContain('+    return a + b\n');
    expect(attempts[2]!.diff).toContain('+    return a ** b');
    expect(changedLines(task.diff_summary)).toEqual(['-    return a - b', '+    return a + b']);
    // The validator took the chosen attempt's verdict: it did not run the tests again.
    const logs = await allLogs(task.id, owner.auth);
    const validatorRuns = logs.filter((l) => l.step === 'validator' && l.status === 'running' && 'retry' in l.input);
    expect(validatorRuns.map((l) => l.input.judged_in)).toEqual(['attempt 2']);
    expect(byStep('validator').map((l) => [l.status, l.output.passed])).toEqual([['done', true]]);
    // Each attempt told as it ended, in the fixer's running records.
    const told = logs.filter((l) => l.step === 'fixer' && l.output.attempt_done);
    expect(told.map((l) => l.output.attempt).sort()).toEqual([1, 2, 3]);
    // Costs: every attempt counts, and the task's tokens are what the model billed.
    const billed = svc.model.billed();
    const sum = (pick: (a: Attempt) => number) => attempts.reduce((n, a) => n + pick(a), 0);
    expect(fixer!.tokens).toBe(sum((a) => a.tokens));
    expect(fixer!.cost_usd).toBeCloseTo(
      sum((a) => a.cost_usd),
      6,
    );
    expect(attempts.every((a) => a.tokens > 0 && a.cost_usd > 0)).toBe(true);
    expect(task.tokens_total).toBe(billed.input + billed.output);
    // The pull request holds the chosen change, and the attempts' trees are gone with the checkout.
    expect(existsSync(join(svc.h.deps.config.dataDir, 'work', task.id))).toBe(false);
  });

  it('none right: the best of them goes on as a single run would (retries, then a draft pull request)', async () => {
    const { owner, repoUrl } = await calcRepo('calc-none-right');
    const stillWrong = editBlock('# calc', '# calc, still wrong', 'README.md');
    const { fixerCalls } = scriptAttempts({ '0': BREAKS_MUL, '0.5': ONLY_MUL, '1': POWERS_MUL }, [stillWrong]);
    const { task, byStep } = await runFixTask(svc.h, owner.auth, repoUrl, 'done', { attempts: 3 });
    const attempts = byStep('fixer')[0]!.output.attempts as Attempt[];
    expect(attempts.map((a) => a.passed)).toEqual([false, false, false]);
    // All failed with one new failure each: the smallest change is kept.
    expect(byStep('fixer')[0]!.output.choice).toEqual({
      attempt: 2,
      reason: 'attempt 2: the smallest change: 2 lines (attempt 1: 4)',
    });
    // Then as today: the retries refine the chosen change one run at a time, and the draft PR holds it.
    expect(task.retry_count).toBe(2);
    expect(fixerCalls()).toHaveLength(5);
    expect(
      byStep('fixer')
        .slice(1)
        .every((l) => l.output.attempts === undefined),
    ).toBe(true);
    expect(byStep('validator').map((l) => l.status)).toEqual(['failed', 'failed', 'failed']);
    expect(byStep('pr')[0]!.output.draft).toBe(true);
    // mul() as attempt 2 left it, and the retries' change on top.
    expect(changedLines(task.diff_summary)).toEqual([
      '-# calc',
      '+# calc, still wrong',
      '-    return a * b',
      '+    return a - b',
    ]);
  });

  it('one attempt (the default) is the fixer as it was: no attempts, the validator runs', async () => {
    const { owner, repoUrl } = await calcRepo('calc-one');
    const { fixerCalls } = scriptAttempts({});
    const { task, byStep } = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    expect(task.attempts).toBe(1);
    expect(fixerCalls()).toHaveLength(1);
    expect(byStep('fixer')[0]!.output.attempts).toBeUndefined();
    expect(byStep('fixer')[0]!.output.choice).toBeUndefined();
    const logs = await allLogs(task.id, owner.auth);
    const validatorRun = logs.find((l) => l.step === 'validator' && l.status === 'running' && 'retry' in l.input)!;
    expect(validatorRun.input.judged_in).toBeUndefined();
    expect(byStep('validator')[0]!.output.passed).toBe(true);
  });
});

describe('the plan’s limit and the repository’s default', { timeout: 120_000 }, () => {
  it('more attempts than the plan allows is a 400 naming the limit, and nothing is created or counted', async () => {
    const free = await calcRepo('calc-free-limit', 'free');
    const pro = await calcRepo('calc-pro-limit', 'pro');
    const refused = [
      [free.owner.auth, { prompt: 'fix add', repo_url: free.repoUrl, attempts: 2 }],
      [pro.owner.auth, { prompt: 'fix add', repo_url: pro.repoUrl, attempts: 4 }],
      [pro.owner.auth, { prompt: 'fix add', repo_url: pro.repoUrl, attempts: 0 }],
      [pro.owner.auth, { prompt: 'A bakery site', task_type: 'scaffold', attempts: 2 }],
    ] as const;
    const answers = [];
    for (const [auth, payload] of refused) {
      const r = await post(auth, payload);
      answers.push([r.statusCode, r.json().error, r.json().message]);
    }
    expect(answers[0]).toEqual([
      400,
      'bad_request',
      'attempts: the free plan allows at most 1 attempt per task (asked for 2)',
    ]);
    expect(answers[1]).toEqual([
      400,
      'bad_request',
      'attempts: the pro plan allows at most 3 attempts per task (asked for 4)',
    ]);
    expect(answers[2]!.slice(0, 2)).toEqual([400, 'bad_request']);
    expect(answers[2]![2]).toMatch(/attempts/);
    expect(answers[3]).toEqual([
      400,
      'bad_request',
      "attempts: scaffold tasks take no attempts (the site's own steps build them)",
    ]);
    for (const { owner } of [free, pro]) {
      const listed = await svc.h.app.inject({ method: 'GET', url: '/v1/tasks', headers: owner.auth });
      expect(listed.json()).toEqual([]);
    }
    const limits = await svc.h.app.inject({ method: 'GET', url: '/v1/tasks/limits', headers: pro.owner.auth });
    expect(limits.json().limits.maxAttempts).toBe(3);
  });

  it('a repository’s default applies to tasks that name none, within the plan; saving more is refused', async () => {
    const { owner, repoUrl } = await calcRepo('calc-default');
    const settings = (payload: Record<string, unknown>) =>
      svc.h.app.inject({
        method: 'PATCH',
        url: `/v1/me/repos/settings?repo=${encodeURIComponent(repoUrl)}`,
        headers: { ...owner.auth, 'content-type': 'application/json' },
        payload,
      });
    const tooMany = await settings({ attempts: 4 });
    expect([tooMany.statusCode, tooMany.json().message]).toEqual([
      400,
      'attempts: the pro plan allows at most 3 attempts per task (asked for 4)',
    ]);
    const saved = await settings({ attempts: 2 });
    expect([saved.statusCode, saved.json().attempts]).toEqual([200, 2]);
    // Parked at the plan gate: what was decided at creation is all this test reads.
    scriptAttempts({});
    const defaulted = await postFixTask(svc.h, owner.auth, repoUrl, { approval_mode: 'manual' });
    const own = await post(owner.auth, { prompt: 'fix add', repo_url: repoUrl, attempts: 1, approval_mode: 'manual' });
    expect(own.statusCode, own.body).toBe(201);
    const got = await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${defaulted}`, headers: owner.auth });
    expect(got.json().task.attempts).toBe(2);
    expect(own.json().attempts).toBe(1);
    const cleared = await settings({ attempts: null });
    expect([cleared.statusCode, cleared.json().attempts]).toEqual([200, null]);
    for (const id of [defaulted, own.json().id]) {
      await waitForStatus(svc.h, id, ['awaiting_plan'], 60_000);
      await svc.h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: owner.auth });
    }
  });
});

describe('a preview of attempts, then continue', { timeout: 240_000 }, () => {
  it('the preview shows the chosen diff at its gate; continue keeps that diff in the pull request', async () => {
    const { owner, repoUrl } = await calcRepo('calc-preview', 'free');
    scriptAttempts({ '0': BREAKS_MUL, '0.5': POWERS_MUL, '1': GOOD_FIX });
    const id = await postFixTask(svc.h, owner.auth, repoUrl, { approval_mode: 'manual' });
    await waitForStatus(svc.h, id, ['awaiting_plan'], 60_000);
    // The free plan allows one attempt: the task is given three here (as an operator's plan could),
    // while it waits at its plan gate, before its fixer runs. Its concurrency (1) runs them in turn.
    await svc.h.deps.db.update(tasks).set({ fixAttempts: 3 }).where(eq(tasks.id, id));
    const approve = (stage: 'plan' | 'diff') =>
      svc.h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/approve`, headers: owner.auth, payload: { stage } });
    expect((await approve('plan')).statusCode).toBe(200);
    const atDiff = await waitForStatus(svc.h, id, ['awaiting_diff', 'failed'], 120_000);
    expect(atDiff.status).toBe('awaiting_diff');
    const waiting = (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: owner.auth })).json();
    const fixer = (waiting.logs as Log[]).find((l) => l.step === 'fixer' && l.status === 'done')!;
    expect(fixer.output.choice).toEqual({ attempt: 3, reason: 'attempt 3: its validation passed (attempt 1: failed)' });
    expect(waiting.task.diff_summary).toBe((fixer.output.attempts as Attempt[])[2]!.diff);
    expect((await approve('diff')).statusCode).toBe(200);
    const preview = await waitForStatus(svc.h, id, ['done', 'failed'], 60_000);
    expect(preview.status).toBe('done');
    const chosen = waiting.task.diff_summary as string;
    const fixerCalls = () => svc.model.calls.filter((c) => stepOf(c) === 'fixer').length;
    const fixerCallsBefore = fixerCalls();

    const continued = await svc.h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/continue`, headers: owner.auth });
    expect(continued.statusCode, continued.body).toBe(201);
    const childId = continued.json().id as string;
    expect(continued.json().attempts).toBe(1);
    // The child's gate: approve its diff as it comes.
    await waitForStatus(svc.h, childId, ['awaiting_diff'], 60_000);
    await svc.h.app.inject({
      method: 'POST',
      url: `/v1/tasks/${childId}/approve`,
      headers: owner.auth,
      payload: { stage: 'diff' },
    });
    const child = await waitForStatus(svc.h, childId, ['done', 'failed'], 120_000);
    expect(child.status).toBe('done');
    const got = (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${childId}`, headers: owner.auth })).json();
    expect(got.task.diff_summary).toBe(chosen);
    expect(got.task.pr_url).toBeTruthy();
    const childLogs = got.logs as Log[];
    expect(childLogs.find((l) => l.step === 'fixer')!.output.diff).toBe(chosen);
    // No fixer ran again: the child validated the kept change and opened the pull request with it.
    expect(fixerCalls()).toBe(fixerCallsBefore);
    expect(childLogs.find((l) => l.step === 'validator' && l.status !== 'running')!.output.passed).toBe(true);
  });
});

/** Processes whose command line is exactly `words` (the sandboxed commands show on the host's /proc). */
function processesRunning(words: string): number {
  let n = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim() === words) n++;
    } catch {
      // gone meanwhile
    }
  }
  return n;
}

describe('a kill during attempts', { timeout: 180_000 }, () => {
  it('stops every attempt at once: their commands end, the task is cancelled, no credit is taken', async () => {
    const { owner, repoUrl } = await calcRepo('calc-kill-attempts');
    const command = 'sleep 6173';
    svc.model.respond((req): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: [{ name: 'bash', args: { command } }] } : calcStepReply(req),
    );
    const id = await postFixTask(svc.h, owner.auth, repoUrl, { attempts: 3, fixer: 'agent' });
    for (let i = 0; i < 1200 && processesRunning(command) < 3; i++) await new Promise((r) => setTimeout(r, 100));
    expect(processesRunning(command)).toBe(3);
    const kill = await svc.h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: owner.auth });
    expect(kill.statusCode, kill.body).toBe(200);
    const ended = await waitForStatus(svc.h, id, ['cancelled', 'done', 'failed'], 60_000);
    expect(ended.status).toBe('cancelled');
    expect(processesRunning(command)).toBe(0);
    const ledger = await svc.h.deps.db.select().from(creditLedger).where(eq(creditLedger.taskId, id));
    expect(ledger.map((l) => l.kind).sort()).toEqual(['hold', 'release']);
    for (let i = 0; i < 100 && existsSync(join(svc.h.deps.config.dataDir, 'work', id)); i++)
      await new Promise((r) => setTimeout(r, 100));
    expect(existsSync(join(svc.h.deps.config.dataDir, 'work', id))).toBe(false);
  });
});
