import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditLedger } from '../../../../src/db/schema.js';
import { filesOfDiff } from '../../../../src/steps/fix/agent/agent-fixer.js';
import { headAndTail } from '../../../../src/steps/fix/agent/shell.js';
import { CALC_REPO, calcStepReply } from '../../../support/fix-script.js';
import { newAccount } from '../../../support/harness.js';
import { waitForStatus } from '../../../support/engine.js';
import {
  MANAGED_KEY,
  type ModelService,
  postFixTask,
  runFixTask,
  startModelService,
} from '../../../support/model-service.js';
import type { ModelRequest, Reply, ToolCallReply } from '../../../support/scripted-model/types.js';

/**
 * The agent fixer (EMEND_FIXER=agent) end to end with scripted trajectories: the scripted model
 * answers the fixer's turns with tool calls in the provider's wire format, the tools run in the
 * real sandbox and on the real checkout, and the validator and the pr step judge what it left.
 */

let svc: ModelService;
beforeAll(async () => {
  svc = await startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_TURNS: '6', EMEND_AGENT_COMMAND_S: '15' });
});
afterAll(() => svc.close());

const bash = (command: string): ToolCallReply => ({ name: 'bash', args: { command } });

/** Answers the planner, locator and inspector as a calc run does, and the fixer's turns from `turns` in order. */
function script(turns: ToolCallReply[][]): { fixerCalls: () => ModelRequest[] } {
  let turn = 0;
  svc.model.respond((req): Reply | undefined => {
    if (!req.tools.includes('bash')) return calcStepReply(req);
    return { toolCalls: turns[Math.min(turn++, turns.length - 1)]! };
  });
  return { fixerCalls: () => svc.model.calls.filter((c) => c.tools.includes('bash')) };
}

type Turn = { turn: number; tool: string; action: string; exit_code?: number; ok?: boolean; observation: string };
const turnsOf = (logs: { step: string; output: Record<string, unknown> }[]) =>
  logs.filter((l) => l.step === 'fixer' && l.output.agent_turn).map((l) => l.output.agent_turn as Turn);

async function calcRepo(name: string, files: Record<string, string> = CALC_REPO) {
  const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
  svc.h.github.createRepo('acme', name, { files, collaborators: [owner.scm!.login] });
  return { owner, repoUrl: `${svc.h.github.webUrl}/acme/${name}` };
}

const logsOf = async (id: string, auth: Record<string, string>) =>
  (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().logs as {
    step: string;
    status: string;
    output: Record<string, unknown>;
  }[];

describe('the agent fixer', { timeout: 120_000 }, () => {
  it('explores, edits with the editor, runs the tests, submits; the validator passes it and the pull request holds it', async () => {
    const { owner, repoUrl } = await calcRepo('calc-agent');
    const { fixerCalls } = script([
      [bash('ls && grep -n "return a" calc/ops.py')],
      [{ name: 'editor', args: { command: 'view', path: 'calc/ops.py', start_line: 1, end_line: 3 } }],
      [
        {
          name: 'editor',
          args: { command: 'replace', path: 'calc/ops.py', old_text: '    return a - b', new_text: '    return a + b' },
        },
      ],
      [bash('python3 -m pytest -q 2>&1 | tail -3; cd tests')],
      [bash('pwd')],
      [{ name: 'submit', args: { summary: 'add() returned a - b; it returns a + b now.' } }],
    ]);
    const { task, byStep } = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    expect(task.pr_url).toBeTruthy();
    const turns = turnsOf(await logsOf(task.id, owner.auth));
    expect(turns.map((t) => [t.turn, t.tool])).toEqual([
      [1, 'bash'],
      [2, 'editor'],
      [3, 'editor'],
      [4, 'bash'],
      [5, 'bash'],
      [6, 'submit'],
    ]);
    expect(turns[0]!.observation).toContain('3:    return a - b');
    expect(turns[0]!.exit_code).toBe(0);
    expect(turns[1]!.observation).toContain('     3      return a - b');
    expect(turns[2]).toMatchObject({ ok: true, action: 'replace calc/ops.py' });
    expect(turns[3]!.observation).toMatch(/passed/);
    // The working directory persists between commands.
    expect(turns[4]!.observation).toContain('/workspace/repo/tests');
    const fixer = byStep('fixer').at(-1)!.output;
    expect(fixer).toMatchObject({
      files_changed: [{ path: 'calc/ops.py', kind: 'modified' }],
      rounds: 6,
      notes: 'add() returned a - b; it returns a + b now.',
    });
    expect(String(fixer.diff)).toContain('+    return a + b');
    expect(byStep('validator').at(-1)!.output).toMatchObject({ passed: true });
    // The model's later turns carry the earlier observations as tool results.
    expect(fixerCalls()[1]!.text).toContain('return a - b');
  });

  it('a hanging command is stopped at its timeout; huge output is cut to head and tail; no network; secrets redacted; the host is out of reach', async () => {
    const { owner, repoUrl } = await calcRepo('calc-hostile', { ...CALC_REPO, 'leak.txt': `key=${MANAGED_KEY}\n` });
    script([
      [bash('sleep 600; echo never')],
      [bash('head -c 5000000 /dev/zero | tr "\\0" x; echo; echo END')],
      [
        bash(
          'exec 3<>/dev/tcp/127.0.0.1/80 && echo connected || echo refused; getent hosts registry.npmjs.org || echo no-dns',
        ),
      ],
      [bash('cat leak.txt; ls /work /root 2>&1 | head -3')],
      [{ name: 'editor', args: { command: 'view', path: '../../etc/passwd' } }],
      [
        {
          name: 'editor',
          args: { command: 'replace', path: 'calc/ops.py', old_text: '    return a - b', new_text: '    return a + b' },
        },
      ],
    ]);
    const { task } = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    const turns = turnsOf(await logsOf(task.id, owner.auth));
    expect(turns[0]!.observation).toContain('did not finish within 15 s');
    expect(turns[0]!.observation).not.toContain('never');
    expect(turns[1]!.observation).toMatch(/characters of output left out|kept only the end/);
    expect(turns[1]!.observation.length).toBeLessThan(12_000);
    expect(turns[2]!.observation).toContain('refused');
    expect(turns[2]!.observation).toContain('no-dns');
    expect(turns[3]!.observation).toContain('key=[redacted]');
    expect(turns[3]!.observation).not.toContain(MANAGED_KEY);
    expect(turns[4]).toMatchObject({ tool: 'editor', ok: false });
    expect(turns[4]!.observation).toContain('".." is refused');
    // Never submitted: the turn limit (6) ends the loop; the change it made still goes to validation.
    expect(turns).toHaveLength(6);
    expect(JSON.stringify(await logsOf(task.id, owner.auth))).not.toContain(MANAGED_KEY);
    expect(svc.h.logLines.join('\n')).not.toContain(MANAGED_KEY);
  });

  it('a model that never changes anything fails the task at the turn limit, saying so', async () => {
    const { owner, repoUrl } = await calcRepo('calc-idle');
    script([[bash('ls')]]);
    const { task } = await runFixTask(svc.h, owner.auth, repoUrl, 'failed');
    expect(task.error).toContain('the model did not submit within 6 turns');
  });
});

describe('the agent fixer’s helpers', () => {
  it('keeps the head and the tail of a long output and says how much was cut', () => {
    const text = `${'a'.repeat(5000)}${'b'.repeat(10000)}${'c'.repeat(7000)}`;
    const kept = headAndTail(text);
    expect(kept.startsWith('a'.repeat(4000))).toBe(true);
    expect(kept.endsWith('c'.repeat(6000))).toBe(true);
    expect(kept).toContain('[12000 characters of output left out]');
    expect(headAndTail('short')).toBe('short');
  });

  it('reads the files a diff changes and how', () => {
    const diff = [
      'diff --git a/x.py b/x.py',
      'index 1..2 100644',
      '--- a/x.py',
      '+++ b/x.py',
      '@@ -1 +1 @@',
      '-a',
      '+b',
      'diff --git a/new.txt b/new.txt',
      'new file mode 100644',
      'diff --git a/old.txt b/old.txt',
      'deleted file mode 100644',
    ].join('\n');
    expect(filesOfDiff(diff)).toEqual([
      { path: 'x.py', kind: 'modified' },
      { path: 'new.txt', kind: 'created' },
      { path: 'old.txt', kind: 'deleted' },
    ]);
  });
});

describe('a kill while the agent runs a command', { timeout: 120_000 }, () => {
  let long: ModelService;
  beforeAll(async () => {
    long = await startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_COMMAND_S: '900' });
  });
  afterAll(() => long.close());

  it('ends a command sleeping 600 s at once: the task is cancelled and no credit is taken', async () => {
    long.model.respond((req): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: [bash('sleep 600')] } : calcStepReply(req),
    );
    const owner = await newAccount(long.h, { plan: 'pro', credits: 5 });
    long.h.github.createRepo('acme', 'calc-kill', { files: CALC_REPO, collaborators: [owner.scm!.login] });
    const id = await postFixTask(long.h, owner.auth, `${long.h.github.webUrl}/acme/calc-kill`);
    // The command is running once the model has been asked for the first turn and a moment has passed.
    for (let i = 0; i < 400 && !long.model.calls.some((c) => c.tools.includes('bash')); i++)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));
    const kill = await long.h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/kill`, headers: owner.auth });
    expect(kill.statusCode, kill.body).toBe(200);
    // Well before the command's own 600 s: the kill ended it.
    const ended = await waitForStatus(long.h, id, ['cancelled', 'done', 'failed'], 60_000);
    expect(ended.status).toBe('cancelled');
    const ledger = await long.h.deps.db.select().from(creditLedger).where(eq(creditLedger.taskId, id));
    expect(ledger.map((l) => l.kind).sort()).toEqual(['hold', 'release']);
  });
});
