import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, calcStepReply } from '../../../support/fix-script.js';
import { newAccount } from '../../../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../../../support/model-service.js';
import type { Reply, ToolCallReply } from '../../../support/scripted-model/types.js';

/**
 * The agent's `run_tests` tool (docs/agent.md): the focused pass by default — only the test files
 * the change touches first — and the whole suite on request, in the real sandbox's work tree.
 */

let svc: ModelService;
beforeAll(async () => {
  svc = await startModelService({ EMEND_FIXER: 'agent', EMEND_AGENT_TURNS: '8', EMEND_AGENT_COMMAND_S: '60' });
});
afterAll(() => svc.close());

const runTests = (all?: boolean): ToolCallReply => ({ name: 'run_tests', args: all === undefined ? {} : { all } });
const fixerCalls = () => svc.model.calls.filter((c) => c.tools.includes('bash'));

type Turn = { turn: number; tool: string; action: string; exit_code?: number; observation: string };

describe('the agent’s run_tests', { timeout: 180_000 }, () => {
  it('runs the focused pass by default and the whole suite on request', async () => {
    const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
    svc.h.github.createRepo('acme', 'calc-focus', {
      files: {
        ...CALC_REPO,
        // Tests that have nothing to do with calc/ops.py: only the whole suite runs them.
        'tests/test_text.py': 'from calc.text import shout\n\n\ndef test_shout():\n    assert shout("a") == "A!"\n',
      },
      collaborators: [owner.scm!.login],
    });
    const repoUrl = `${svc.h.github.webUrl}/acme/calc-focus`;
    const turns: ToolCallReply[][] = [
      [
        {
          name: 'editor',
          args: { command: 'replace', path: 'calc/ops.py', old_text: '    return a - b', new_text: '    return a + b' },
        },
      ],
      [runTests()],
      [runTests(true)],
      [{ name: 'submit', args: { summary: 'add() adds.' } }],
    ];
    const before = fixerCalls().length;
    svc.model.respond((req): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: turns[fixerCalls().length - before - 1]! } : calcStepReply(req),
    );
    expect(fixerCalls().length).toBe(before);
    const run = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    const got = (
      await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${run.task.id}`, headers: owner.auth })
    ).json();
    const done = (got.logs as { step: string; output: Record<string, unknown> }[])
      .filter((l) => l.step === 'fixer' && l.output.agent_turn)
      .map((l) => l.output.agent_turn as Turn);
    expect(done.map((t) => [t.tool, t.action])).toEqual([
      ['editor', 'replace calc/ops.py'],
      ['run_tests', 'focused'],
      ['run_tests', 'all'],
      ['submit', ''],
    ]);
    const [focused, all] = [done[1]!, done[2]!];
    expect(focused.observation).toContain(
      'The focused pass: 1 test file(s): tests/test_ops.py (imports a changed module)',
    );
    expect(focused.observation).toContain('2 passed, 0 failed, 0 skipped');
    expect(focused.observation).not.toContain('test_text.py');
    expect(focused.exit_code).toBe(0);
    expect(all.observation).toContain('The whole suite: python3 -m pytest');
    expect(all.observation).toContain('3 passed, 0 failed, 0 skipped');
    expect(all.observation).toContain('tests/test_text.py');
    // The model saw the tool and its description.
    expect(fixerCalls().at(-1)!.tools).toContain('run_tests');
  });
});
