import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, calcStepReply } from '../../../support/fix-script.js';
import { approveGate, waitForStatus } from '../../../support/engine.js';
import { newAccount } from '../../../support/harness.js';
import { type ModelService, postFixTask, runFixTask, startModelService } from '../../../support/model-service.js';
import type { ModelRequest, Reply, ToolCallReply } from '../../../support/scripted-model/types.js';

/**
 * The agent fixer's commands run in the repository's environment (a work tree set up as the
 * validator sets up its own: src/environments/work-tree.ts), and what they change comes back to
 * the checkout without what the setup produced; a failed verdict resumes the same conversation.
 */

let svc: ModelService;
beforeAll(async () => {
  svc = await startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_TURNS: '8', EMEND_AGENT_COMMAND_S: '30' });
});
afterAll(() => svc.close());

const bash = (command: string): ToolCallReply => ({ name: 'bash', args: { command } });
const replace = (path: string, from: string, to: string): ToolCallReply => ({
  name: 'editor',
  args: { command: 'replace', path, old_text: from, new_text: to },
});
const submit = (summary: string): ToolCallReply => ({ name: 'submit', args: { summary } });

type Turn = { turn: number; tool: string; action: string; exit_code?: number; ok?: boolean; observation: string };

async function getTask(id: string, auth: Record<string, string>) {
  const got = (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
  const logs = got.logs as { step: string; status: string; output: Record<string, unknown> }[];
  return {
    logs,
    turns: logs.filter((l) => l.step === 'fixer' && l.output.agent_turn).map((l) => l.output.agent_turn as Turn),
  };
}

/** A calc repository whose account setting runs a setup command: what it makes is the "environment". */
async function repoWithSetup(name: string) {
  const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
  svc.h.github.createRepo('acme', name, {
    files: { ...CALC_REPO, 'calc/unused.py': 'X = 1\n' },
    collaborators: [owner.scm!.login],
  });
  const repoUrl = `${svc.h.github.webUrl}/acme/${name}`;
  const patch = await svc.h.app.inject({
    method: 'PATCH',
    url: `/v1/me/repos/settings?repo=${encodeURIComponent(repoUrl)}`,
    headers: owner.auth,
    payload: { setup_command: 'mkdir -p build && echo made-by-setup > build/stamp && echo SETUP-RAN' },
  });
  expect(patch.statusCode, patch.body).toBe(200);
  return { owner, repoUrl };
}

const fixerCalls = () => svc.model.calls.filter((c) => c.tools.includes('bash'));

describe('the agent fixer in the repository’s environment', { timeout: 180_000 }, () => {
  it('runs commands where the setup ran, is told the test command, and brings back only its own change', async () => {
    const { owner, repoUrl } = await repoWithSetup('calc-env');
    const turns: ToolCallReply[][] = [
      [bash('cat build/stamp; echo "home=$HOME"')],
      [replace('calc/ops.py', '    return a - b', '    return a + b')],
      // A file written by a command, a deletion, a link out of the checkout.
      [bash("printf 'NOTE = 2\\n' > calc/note.py && rm calc/unused.py && ln -s /etc/passwd calc/passwd-link")],
      [bash('python3 -m pytest -q 2>&1 | tail -2')],
      [submit('add() adds; a note added, an unused module removed.')],
    ];
    const before = fixerCalls().length;
    svc.model.respond((req): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: turns[fixerCalls().length - before - 1]! } : calcStepReply(req),
    );
    const run = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    const { turns: done, logs } = await getTask(run.task.id, owner.auth);
    // The first task on the repository set the environment up in the fixer's step, its output in the log as it ran.
    const setupRows = logs.filter((l) => String(l.output.setup_output ?? '').includes('SETUP-RAN'));
    expect(setupRows.map((l) => [l.step, l.status])).toEqual([['fixer', 'running']]);
    expect(
      (run.byStep('validator').at(-1)!.output as { setup: { environment: { cache: string } } }).setup.environment.cache,
    ).toBe('hit');
    expect(done[0]!.observation).toContain('made-by-setup');
    expect(done[0]!.observation).toContain('home=/workspace/home');
    expect(done[3]!.observation).toMatch(/2 passed/);
    // The opening names the test command the validator runs.
    expect(fixerCalls()[before]!.text).toMatch(/The repository's tests run with: `[^`]*pytest/);
    const fixer = run.byStep('fixer').at(-1)!.output;
    const paths = (fixer.files_changed as { path: string; kind: string }[]).map((f) => [f.path, f.kind]);
    expect(paths.sort()).toEqual([
      ['calc/note.py', 'created'],
      ['calc/ops.py', 'modified'],
      ['calc/unused.py', 'deleted'],
    ]);
    const diff = String(fixer.diff);
    expect(diff).not.toContain('build/stamp');
    expect(diff).not.toContain('passwd');
    expect(run.byStep('validator').at(-1)!.output).toMatchObject({ passed: true });
  });

  it('a failed verdict resumes the same conversation, told what failed', async () => {
    const { owner, repoUrl } = await repoWithSetup('calc-resume');
    const round1: ToolCallReply[][] = [
      [bash('echo FIRST-ROUND-OBSERVATION')],
      [replace('calc/ops.py', '    return a - b', '    return a + b')],
      // A slip that breaks mul(): a new failure, so the verdict fails.
      [replace('calc/ops.py', '    return a * b', '    return a ** b')],
      [submit('add() adds now.')],
    ];
    const round2: ToolCallReply[][] = [
      [replace('calc/ops.py', '    return a ** b', '    return a * b')],
      [submit('fixed')],
    ];
    const before = fixerCalls().length;
    const script = [...round1, ...round2];
    svc.model.respond((req: ModelRequest): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: script[fixerCalls().length - before - 1]! } : calcStepReply(req),
    );
    const run = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    expect(run.byStep('validator').map((l) => (l.output as { passed: boolean }).passed)).toEqual([false, true]);
    const firstOfRound2 = fixerCalls()[before + round1.length]!;
    // The same conversation: round 1's opening and observations, then the validator's failure.
    expect(firstOfRound2.text).toContain('FIRST-ROUND-OBSERVATION');
    expect(firstOfRound2.text).toContain('add() in calc/ops.py subtracts');
    expect(firstOfRound2.text).toContain('did not pass validation');
    expect(firstOfRound2.text).toContain('test_mul');
    const diff = String(run.byStep('fixer').at(-1)!.output.diff);
    expect(diff).toContain('+    return a + b');
    expect(diff).not.toContain('a ** b');
  });

  it('the diff gate holds the agent’s change for approval, as it holds the pipeline fixer’s', async () => {
    const { owner, repoUrl } = await repoWithSetup('calc-gate');
    const script: ToolCallReply[][] = [
      [replace('calc/ops.py', '    return a - b', '    return a + b')],
      [submit('adds')],
    ];
    const before = fixerCalls().length;
    svc.model.respond((req: ModelRequest): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: script[fixerCalls().length - before - 1]! } : calcStepReply(req),
    );
    const id = await postFixTask(svc.h, owner.auth, repoUrl, { approval_mode: 'manual' });
    await waitForStatus(svc.h, id, 'awaiting_plan', 60_000);
    expect((await approveGate(svc.h, owner.auth, id, { stage: 'plan' })).statusCode).toBe(200);
    const waiting = await waitForStatus(svc.h, id, 'awaiting_diff', 60_000);
    expect(waiting.diffSummary).toContain('+    return a + b');
    // Nothing of the validator ran before the approval.
    expect((await getTask(id, owner.auth)).logs.some((l) => l.step === 'validator')).toBe(false);
    expect((await approveGate(svc.h, owner.auth, id, { stage: 'diff' })).statusCode).toBe(200);
    const done = await waitForStatus(svc.h, id, ['done', 'failed'], 100_000);
    expect(done.status).toBe('done');
    const task = (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: owner.auth })).json().task;
    expect(task.pr_url).toBeTruthy();
  });
});
