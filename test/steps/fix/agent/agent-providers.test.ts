import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_REPO, calcStepReply } from '../../../support/fix-script.js';
import { newAccount } from '../../../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../../../support/model-service.js';
import type { Reply, ToolCallReply } from '../../../support/scripted-model/types.js';

/**
 * The agent fixer with the models people bring: an OpenAI-compatible server at the account's own
 * base_url (tool calls over chat completions, reached through the outbound address policy), and a
 * model without tool calling that answers with one fenced command per reply.
 */

let svc: ModelService;
beforeAll(async () => {
  // The account's base_url is a user-given URL: loopback is allowed for the scripted server only.
  // The wall-time ceiling is the lowest the operator may set, so that a test moves the clock past it
  // by less than the worker's stale time (30 s): the heartbeats stay fresh.
  svc = await startModelService({ EMEND_FIXER: 'agent', EMEND_OUTBOUND_ALLOW: '127.0.0.1', EMEND_AGENT_WALL_S: '10' });
});
afterAll(() => svc.close());

const fix: ToolCallReply = {
  name: 'editor',
  args: { command: 'replace', path: 'calc/ops.py', old_text: '    return a - b', new_text: '    return a + b' },
};

type Turn = { turn: number; tool: string; action: string; exit_code?: number; observation: string };

async function calcRepo(name: string) {
  const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
  svc.h.github.createRepo('acme', name, { files: CALC_REPO, collaborators: [owner.scm!.login] });
  return { owner, repoUrl: `${svc.h.github.webUrl}/acme/${name}` };
}

async function turnsOf(id: string, auth: Record<string, string>): Promise<Turn[]> {
  const got = (await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
  return (got.logs as { step: string; output: Record<string, unknown> }[])
    .filter((l) => l.step === 'fixer' && l.output.agent_turn)
    .map((l) => l.output.agent_turn as Turn);
}

/** The account's own OpenAI-compatible server (the scripted one, at its base_url) as its BYOK key. */
async function ownServer(auth: Record<string, string>, key: string, model: string, contextWindow: number) {
  svc.model.validKeys.add(key);
  const saved = await svc.h.app.inject({
    method: 'POST',
    url: '/v1/me/keys',
    headers: auth,
    payload: {
      provider: 'openai',
      api_key: key,
      base_url: svc.model.urls.openai,
      default_model: model,
      context_window: contextWindow,
    },
  });
  expect(saved.statusCode, saved.body).toBe(201);
  const byok = await svc.h.app.inject({
    method: 'POST',
    url: '/v1/me/byok',
    headers: auth,
    payload: { enabled: true },
  });
  expect(byok.statusCode, byok.body).toBe(200);
}

describe('the agent fixer with the models people bring', { timeout: 120_000 }, () => {
  it('an OpenAI-compatible server at the account’s base_url: tool calls over chat completions', async () => {
    const { owner, repoUrl } = await calcRepo('calc-compatible');
    const key = 'sk-own-compatible-server';
    await ownServer(owner.auth, key, 'own-coder', 65_536);
    let turn = 0;
    const turns: ToolCallReply[][] = [
      [{ name: 'bash', args: { command: 'ls calc' } }],
      [fix],
      [{ name: 'submit', args: { summary: 'done' } }],
    ];
    svc.model.respond((req): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: turns[turn++]! } : calcStepReply(req),
    );
    const { task, byStep } = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    expect((await turnsOf(task.id, owner.auth)).map((t) => t.tool)).toEqual(['bash', 'editor', 'submit']);
    expect(byStep('fixer').at(-1)!.output.model).toBe('openai/own-coder');
    // Every fixer call went to the account's server with its key.
    const fixerCalls = svc.model.calls.filter((c) => c.tools.includes('bash'));
    expect(fixerCalls.map((c) => c.key)).toEqual([key, key, key]);
  });

  it('a model without tool calling: one fenced command per reply runs as bash; a reply with none is asked again', async () => {
    const { owner, repoUrl } = await calcRepo('calc-plain');
    const replies = [
      'Let me look first.\n```bash\ngrep -n "return a" calc/ops.py\n```',
      'I think I know.',
      "```bash\nsed -i 's/return a - b/return a + b/' calc/ops.py && python3 -m pytest -q 2>&1 | tail -1\n```",
    ];
    let n = 0;
    const before = svc.model.calls.filter((c) => c.tools.includes('bash')).length;
    svc.model.respond((req): Reply | undefined => {
      if (!req.tools.includes('bash')) return calcStepReply(req);
      const text = replies[n++];
      return text !== undefined ? { text } : { toolCalls: [{ name: 'submit', args: { summary: 'fixed with sed' } }] };
    });
    const { task, byStep } = await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    const turns = await turnsOf(task.id, owner.auth);
    expect(turns.map((t) => [t.tool, t.action])).toEqual([
      ['bash', 'grep -n "return a" calc/ops.py'],
      ['none', ''],
      ['bash', "sed -i 's/return a - b/return a + b/' calc/ops.py && python3 -m pytest -q 2>&1 | tail -1"],
      ['submit', ''],
    ]);
    expect(turns[0]!.observation).toContain('3:    return a - b');
    expect(turns[2]!.observation).toMatch(/2 passed/);
    // The reply with no command was answered with how to call a tool.
    const third = svc.model.calls.filter((c) => c.tools.includes('bash'))[before + 2]!;
    expect(third.text).toContain('Call a tool');
    expect(String(byStep('fixer').at(-1)!.output.diff)).toContain('+    return a + b');
  });

  it('a conversation outgrowing the model’s window loses its oldest observations, never the request', async () => {
    const { owner, repoUrl } = await calcRepo('calc-window');
    const key = 'sk-own-small-window';
    await ownServer(owner.auth, key, 'small-window', 8_192);
    const print = (letter: string) => ({ name: 'bash', args: { command: `python3 -c "print('${letter}' * 7000)"` } });
    const turns: ToolCallReply[][] = [
      [print('Q')],
      [print('R')],
      [print('S')],
      [fix],
      [{ name: 'submit', args: { summary: 'done' } }],
    ];
    let turn = 0;
    const before = svc.model.calls.filter((c) => c.tools.includes('bash')).length;
    svc.model.respond((req): Reply | undefined =>
      req.tools.includes('bash') ? { toolCalls: turns[turn++]! } : calcStepReply(req),
    );
    await runFixTask(svc.h, owner.auth, repoUrl, 'done');
    const fourth = svc.model.calls.filter((c) => c.tools.includes('bash'))[before + 3]!;
    expect(fourth.text).toContain('[observation elided');
    // The oldest output went first; the newest is whole; the request is still there.
    expect(fourth.text).not.toContain('Q'.repeat(7000));
    expect(fourth.text).toContain('S'.repeat(7000));
    expect(fourth.text).toContain('add() in calc/ops.py subtracts instead of adding');
  });

  it('the plan’s turns bound the loop under the operator’s ceiling (pro: 40 of EMEND_AGENT_TURNS’s 100)', async () => {
    const { owner, repoUrl } = await calcRepo('calc-plan-turns');
    svc.model.respond((req): Reply | undefined =>
      req.tools.includes('bash') ? { text: 'Still thinking.' } : calcStepReply(req),
    );
    const { task } = await runFixTask(svc.h, owner.auth, repoUrl, 'failed');
    expect(task.error).toContain('the model did not submit within 40 turns');
    expect(await turnsOf(task.id, owner.auth)).toHaveLength(40);
  });

  it('the wall time ends the loop between turns (the lower of the plan’s and EMEND_AGENT_WALL_S’s 10 s)', async () => {
    const { owner, repoUrl } = await calcRepo('calc-wall-time');
    let asked = 0;
    svc.model.respond((req): Reply | undefined => {
      if (!req.tools.includes('bash')) return calcStepReply(req);
      asked++;
      // The second turn's command takes (by the service's clock) longer than the loop may last.
      if (asked === 2) svc.h.clock.advance(11_000);
      return { toolCalls: [{ name: 'bash', args: { command: `echo turn ${asked}` } }] };
    });
    const { task } = await runFixTask(svc.h, owner.auth, repoUrl, 'failed');
    expect(task.error).toContain('the agent changed no file: the wall time of 10 s ran out');
    const turns = await turnsOf(task.id, owner.auth);
    expect(turns.map((t) => [t.tool, t.action])).toEqual([
      ['bash', 'echo turn 1'],
      ['bash', 'echo turn 2'],
    ]);
    expect(asked).toBe(2);
  });
});
