import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorker } from '../../../../src/engine/worker.js';
import { productionSteps } from '../../../../src/runtime/step-registry.js';
import { CALC_REPO, calcStepReply } from '../../../support/fix-script.js';
import { newAccount } from '../../../support/harness.js';
import { waitFor, waitForStatus } from '../../../support/engine.js';
import {
  MANAGED_KEY,
  type ModelService,
  type Provider,
  postFixTask,
  runFixTask,
  startModelService,
} from '../../../support/model-service.js';
import { need, requirements } from '../../../support/requirements.js';
import type { Reply, ToolCallReply } from '../../../support/scripted-model/types.js';

/**
 * The agent fixer against what a model (or a repository) may do to it: a fork bomb, reading
 * the host's files, 50 MB of output, a budget that runs out mid-loop, a worker lost mid-loop,
 * and the tool calls of every provider's wire format.
 */

const bash = (command: string): ToolCallReply => ({ name: 'bash', args: { command } });
const fix: ToolCallReply = {
  name: 'editor',
  args: { command: 'replace', path: 'calc/ops.py', old_text: '    return a - b', new_text: '    return a + b' },
};
const submit: ToolCallReply = { name: 'submit', args: { summary: 'add() adds.' } };

type Turn = { turn: number; tool: string; action: string; exit_code?: number; observation: string };

async function turnsOf(svc: ModelService, id: string, auth: Record<string, string>): Promise<Turn[]> {
  const got = (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
  return (got.logs as { step: string; output: Record<string, unknown> }[])
    .filter((l) => l.step === 'fixer' && l.output.agent_turn)
    .map((l) => l.output.agent_turn as Turn);
}

async function calcRepo(svc: ModelService, name: string) {
  const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
  svc.h.github.createRepo('acme', name, { files: CALC_REPO, collaborators: [owner.scm!.login] });
  return { owner, repoUrl: `${svc.h.github.webUrl}/acme/${name}` };
}

/** The fixer's turns from `turns` in order (the last one repeated); the other steps as a calc run. */
function script(svc: ModelService, turns: ToolCallReply[][], usage?: { input: number; output: number }) {
  let turn = 0;
  svc.model.respond((req): Reply | undefined => {
    if (!req.tools.includes('bash')) return calcStepReply(req);
    return { toolCalls: turns[Math.min(turn++, turns.length - 1)]!, ...(usage ? { usage } : {}) };
  });
}

describe('hostile commands', { timeout: 180_000 }, () => {
  let svc: ModelService;
  beforeAll(async () => {
    svc = await startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_TURNS: '8', EMEND_AGENT_COMMAND_S: '15' });
  });
  afterAll(() => svc.close());

  it('a fork bomb is contained and the loop goes on; the host’s files and the service’s environment are out of reach; 50 MB of output is cut', async (ctx) => {
    need(ctx, requirements.sandboxLimit(svc.h.deps.sandbox.report(), 'processes'));
    const { owner, repoUrl } = await calcRepo(svc, 'calc-bomb');
    const dataDir = svc.h.deps.config.dataDir;
    script(svc, [
      [bash('bomb() { bomb | bomb & }; bomb; sleep 3; echo bomb-done')],
      [bash('echo still-alive')],
      [
        bash(
          `ls ${JSON.stringify(process.cwd())} 2>&1 | head -2; ls ${JSON.stringify(dataDir)} 2>&1 | head -2; ` +
            'cat /proc/1/environ 2>&1 | tr "\\0" "\\n" | head -20; env',
        ),
      ],
      [bash('head -c 50000000 /dev/zero | tr "\\0" y; echo; echo END')],
      [fix],
      [submit],
    ]);
    const { task } = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    const turns = await turnsOf(svc, task.id, owner.auth);
    expect(turns.map((t) => t.tool)).toEqual(['bash', 'bash', 'bash', 'bash', 'editor', 'submit']);
    expect(turns[0]!.observation).toMatch(/processes limit|did not finish within/);
    expect(turns[1]).toMatchObject({ exit_code: 0 });
    expect(turns[1]!.observation).toContain('still-alive');
    // The service's checkout and data directory do not exist in the sandbox; no secret of the service's.
    expect(turns[2]!.observation.match(/No such file or directory/g)?.length).toBeGreaterThanOrEqual(2);
    expect(turns[2]!.observation).not.toContain(MANAGED_KEY);
    expect(turns[2]!.observation).not.toMatch(/OPENAI_API_KEY|DATABASE_URL|EMEND_(?!COMMAND=)/);
    expect(turns[3]!.observation).toMatch(/characters of output left out|kept only the end/);
    expect(turns[3]!.observation).toContain('END');
    expect(turns[3]!.observation.length).toBeLessThan(12_000);
  });
});

describe('a budget that runs out mid-loop', { timeout: 120_000 }, () => {
  let svc: ModelService;
  beforeAll(async () => {
    svc = await startModelService({
      EMEND_FIXER: 'agent',
      EMEND_AGENT_TURNS: '20',
      EMEND_TASK_BUDGET_TOKENS_PRO: '40000',
    });
  });
  afterAll(() => svc.close());

  it('ends the task saying the budget is spent, before the turn limit', async () => {
    const { owner, repoUrl } = await calcRepo(svc, 'calc-budget');
    script(svc, [[bash('ls')]], { input: 9_000, output: 200 });
    const { task } = await runFixTask(svc.h, owner.auth, repoUrl, 'failed');
    expect(task.error).toMatch(/budget/i);
    const turns = await turnsOf(svc, task.id, owner.auth);
    expect(turns.length).toBeGreaterThanOrEqual(1);
    expect(turns.length).toBeLessThan(20);
    // No call starts once the budget is spent: past it by at most the one answer that crossed it
    // (the check is made before each call, on an estimate of its input; these answers report 9,000).
    expect(task.tokens_total).toBeLessThan(40_000 + 9_200);
  });
});

describe('a worker lost mid-loop', { timeout: 120_000 }, () => {
  let svc: ModelService;
  beforeAll(async () => {
    svc = await startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_COMMAND_S: '900' });
  });
  afterAll(() => svc.close());

  it('another worker starts the fixer again afresh and finishes the task', async () => {
    const { owner, repoUrl } = await calcRepo(svc, 'calc-lost');
    let fixerCalls = 0;
    svc.model.respond((req): Reply | undefined => {
      if (!req.tools.includes('bash')) return calcStepReply(req);
      fixerCalls++;
      // The first worker's loop: a command that outlives the worker. The second's: a fix.
      if (fixerCalls === 1) return { toolCalls: [bash('echo before-the-loss; sleep 600')] };
      return { toolCalls: [fixerCalls === 2 ? fix : submit] };
    });
    const id = await postFixTask(svc.h, owner.auth, repoUrl);
    await waitFor('the first command to run', async () => fixerCalls === 1);
    await svc.worker.stop();
    const second = await startWorker(svc.h.deps, productionSteps(), {
      concurrency: 1,
      heartbeatMs: 500,
      staleMs: 30_000,
      maintenanceMs: 60_000,
    });
    svc.worker = second;
    const ended = await waitForStatus(svc.h, id, ['done', 'failed', 'cancelled'], 100_000);
    expect(ended.status, ended.error ?? '').toBe('done');
    // The second worker's fixer began a new conversation: its first request holds the opening alone.
    const secondOpening = svc.model.calls.filter((c) => c.tools.includes('bash'))[1]!;
    expect(secondOpening.messages.filter((m) => m.role !== 'user')).toEqual([]);
    expect(secondOpening.text).not.toContain('before-the-loss');
    const turns = await turnsOf(svc, id, owner.auth);
    expect(turns.map((t) => [t.turn, t.tool])).toEqual([
      [1, 'bash'],
      [1, 'editor'],
      [2, 'submit'],
    ]);
  });
});

describe.each<Provider>(['anthropic', 'google'])('tool calls in the %s wire format', (provider) => {
  let svc: ModelService;
  beforeAll(async () => {
    svc = await startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_COMMAND_S: '30' }, provider);
  });
  afterAll(() => svc.close());

  it('explores, edits, runs the tests and submits', { timeout: 120_000 }, async () => {
    const { owner, repoUrl } = await calcRepo(svc, `calc-${provider}`);
    script(svc, [
      [bash('grep -n "return a" calc/ops.py')],
      [fix],
      [bash('python3 -m pytest -q 2>&1 | tail -1')],
      [submit],
    ]);
    const { task, byStep } = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    const turns = await turnsOf(svc, task.id, owner.auth);
    expect(turns.map((t) => t.tool)).toEqual(['bash', 'editor', 'bash', 'submit']);
    expect(turns[0]!.observation).toContain('3:    return a - b');
    expect(turns[2]!.observation).toMatch(/2 passed/);
    expect(String(byStep('fixer').at(-1)!.output.model)).toMatch(new RegExp(`^${provider}/`));
    // The observation went back to the model as the provider's tool result.
    expect(svc.model.calls.filter((c) => c.tools.includes('bash'))[1]!.text).toContain('return a - b');
  });
});
