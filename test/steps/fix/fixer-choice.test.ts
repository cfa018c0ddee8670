import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, GOOD_FIX, calcStepReply, stepOf } from '../../support/fix-script.js';
import { newAccount } from '../../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../../support/model-service.js';
import type { Reply } from '../../support/scripted-model/types.js';

/**
 * The fixer step runs the fixer the task stores, whatever the operator's default: on a server
 * left at EMEND_FIXER=pipeline, a pro task asking for the agent gets the tool-using loop (the
 * scripted model answers its turns with tool calls), and the next task, naming none, the
 * pipeline's one-shot fixer.
 */

let svc: ModelService;
beforeAll(async () => {
  svc = await startModelService();
  svc.model.respond((req): Reply | undefined => {
    if (req.tools.includes('bash')) {
      // The agent: one exact replace with the editor, then submit.
      const turn = svc.model.calls.filter((c) => c.tools.includes('bash')).length;
      return turn === 1
        ? {
            toolCalls: [
              {
                name: 'editor',
                args: {
                  command: 'replace',
                  path: 'calc/ops.py',
                  old_text: '    return a - b',
                  new_text: '    return a + b',
                },
              },
            ],
          }
        : { toolCalls: [{ name: 'submit', args: { summary: 'add() subtracted; it adds now.' } }] };
    }
    return stepOf(req) === 'fixer' ? { text: GOOD_FIX } : calcStepReply(req);
  });
});
afterAll(() => svc?.close());

type Log = { step: string; output: Record<string, unknown> };

/** The tools of the agent's turn records (running records of the fixer step) in the task's whole log. */
async function agentTools(id: string, auth: Record<string, string>): Promise<string[]> {
  const logs = (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().logs as Log[];
  return logs
    .filter((l) => l.step === 'fixer' && l.output.agent_turn)
    .map((l) => (l.output.agent_turn as { tool: string }).tool);
}

describe('the fixer the task chose', { timeout: 120_000 }, () => {
  it('fixer "agent" on pro runs the agent on a server whose default is the pipeline; a task naming none runs the pipeline', async () => {
    const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
    for (const name of ['calc-chosen-agent', 'calc-default-pipeline'])
      svc.h.github.createRepo('acme', name, { files: CALC_REPO, collaborators: [owner.scm!.login] });
    const repo = (name: string) => `${svc.h.github.webUrl}/acme/${name}`;

    const agent = await runFixTask(svc.h, owner.auth, repo('calc-chosen-agent'), 'done', { fixer: 'agent' });
    expect(agent.task.fixer).toBe('agent');
    expect(agent.task.pr_url).toBeTruthy();
    expect(await agentTools(agent.task.id, owner.auth)).toEqual(['editor', 'submit']);
    expect(agent.byStep('fixer').at(-1)!.output).toMatchObject({ rounds: 2, notes: 'add() subtracted; it adds now.' });
    expect(agent.byStep('validator').at(-1)!.output).toMatchObject({ passed: true });
    const toolCalls = svc.model.calls.filter((c) => c.tools.includes('bash')).length;
    expect(toolCalls).toBe(2);

    const pipeline = await runFixTask(svc.h, owner.auth, repo('calc-default-pipeline'), 'done');
    expect(pipeline.task.fixer).toBe('pipeline');
    expect(pipeline.task.pr_url).toBeTruthy();
    expect(await agentTools(pipeline.task.id, owner.auth)).toEqual([]);
    // no more tool-using calls: the pipeline fixer answered in one shot
    expect(svc.model.calls.filter((c) => c.tools.includes('bash')).length).toBe(toolCalls);
    expect(pipeline.byStep('fixer').at(-1)!.output).toMatchObject({ rounds: 1 });
  });
});
