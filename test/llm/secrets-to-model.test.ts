import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workRootOf } from '../../src/checkout/layout.js';
import { CALC_REPO, GOOD_FIX, calcStepReply, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { MANAGED_KEY, type ModelService, runFixTask, startModelService } from '../support/model-service.js';
import type { ModelRequest, Reply, ToolCallReply } from '../support/scripted-model/types.js';

/**
 * Repository text holding a secret the service knows for the task (issue 42, point 4): the model
 * client redacts every such secret from every request of every step, whatever the provider. A
 * repository whose AGENTS.md and calc/ops.py hold the operator's provider keys, the account's own
 * (BYOK) key, its code-host token and the repository's setup-only secret runs a whole fix task;
 * no request body the scripted model receives holds any of them, and `[redacted]` stands where
 * each was. The steps are spread over the three providers' wire formats.
 */

const ANTHROPIC_KEY = 'sk-ant-managed-5e1f0a9b7c3d8e2f';
const GOOGLE_KEY = 'AIza-managed-8c2b4e6f1a3d9b7c';
const BYOK_KEY = 'sk-byok-own-3f9a1c7e5b2d4a6e';
const SETUP_SECRET = 'npm_SETUPONLY_4b8e2a6c9f1d0e3a';

let svc: ModelService;
beforeAll(async () => {
  svc = await startModelService({
    ANTHROPIC_API_KEY: ANTHROPIC_KEY,
    GOOGLE_GENERATIVE_AI_API_KEY: GOOGLE_KEY,
    EMEND_MODEL_PLANNER: 'anthropic:claude-sonnet-4-5',
    EMEND_MODEL_LOCATOR: 'google:gemini-2.5-flash',
    EMEND_MODEL_INSPECTOR: 'openai:gpt-4.1',
    EMEND_MODEL_FIXER: 'google:gemini-2.5-pro',
  });
  for (const key of [ANTHROPIC_KEY, GOOGLE_KEY, BYOK_KEY]) svc.model.validKeys.add(key);
});
afterAll(() => svc?.close());

type Secrets = Record<string, string>;

/**
 * An account (pro) with its own key saved (BYOK on when asked) and a setup-only secret for a
 * repository whose AGENTS.md names every secret on a line of its own and whose calc/ops.py holds
 * them in a comment.
 */
async function leakyRepo(
  name: string,
  byok: boolean,
): Promise<{ auth: Record<string, string>; repoUrl: string; secrets: Secrets }> {
  const { h } = svc;
  const owner = await newAccount(h, { plan: 'pro', credits: 5 });
  const secrets: Secrets = {
    'managed openai key': MANAGED_KEY,
    'managed anthropic key': ANTHROPIC_KEY,
    'managed google key': GOOGLE_KEY,
    'own provider key': BYOK_KEY,
    'code-host token': owner.scm!.token,
    'setup-only secret': SETUP_SECRET,
  };
  const lines = Object.entries(secrets).map(([kind, value]) => `- ${kind}: ${value}`);
  h.github.createRepo('acme', name, {
    files: {
      ...CALC_REPO,
      'AGENTS.md': `# Notes for agents\n\nRun pytest before you submit. Deploy with:\n${lines.join('\n')}\n`,
      'calc/ops.py': `${CALC_REPO['calc/ops.py']}\n\n# deploy: ${Object.values(secrets).join(' ')}\n`,
    },
    collaborators: [owner.scm!.login],
  });
  const repoUrl = `${h.github.webUrl}/acme/${name}`;
  const key = await h.app.inject({
    method: 'POST',
    url: '/v1/me/keys',
    headers: owner.auth,
    payload: { provider: 'openai', api_key: BYOK_KEY },
  });
  expect(key.statusCode, key.body).toBe(201);
  if (byok) {
    const on = await h.app.inject({
      method: 'POST',
      url: '/v1/me/byok',
      headers: owner.auth,
      payload: { enabled: true },
    });
    expect(on.statusCode, on.body).toBe(200);
  }
  const secret = await h.app.inject({
    method: 'POST',
    url: `/v1/me/repos/secrets?repo=${encodeURIComponent(repoUrl)}`,
    headers: owner.auth,
    payload: { name: 'NPM_TOKEN', value: SETUP_SECRET },
  });
  expect(secret.statusCode, secret.body).toBe(201);
  return { auth: owner.auth, repoUrl, secrets };
}

/** No secret in any of the requests' bodies (as received, in the provider's wire format). */
function expectNoSecret(calls: ModelRequest[], secrets: Secrets, step: string) {
  expect(calls.length, `${step} sent no request`).toBeGreaterThan(0);
  for (const call of calls) {
    const body = JSON.stringify(call.body);
    for (const [kind, value] of Object.entries(secrets))
      expect(body.includes(value), `the ${kind} in a ${call.provider} request of the ${step}`).toBe(false);
  }
}

/** `[redacted]` stands for each secret on its line of AGENTS.md. */
function expectMarkers(text: string, secrets: Secrets, where: string) {
  for (const kind of Object.keys(secrets)) expect(text, where).toContain(`- ${kind}: [redacted]`);
}

describe('secrets in repository text never reach a model', { timeout: 240_000 }, () => {
  it('the pipeline fixer’s run, managed keys: planner (Anthropic), locator (Google), inspector (OpenAI), fixer (Google)', async () => {
    const { auth, repoUrl, secrets } = await leakyRepo('leaky-pipeline', false);
    const before = svc.model.calls.length;
    scriptCalcRun(svc.model, [GOOD_FIX]);
    const { task } = await runFixTask(svc.h, auth, repoUrl, 'done');
    expect(task.pr_url).toBeTruthy();
    const calls = svc.model.calls.slice(before);
    const of = (step: string) => calls.filter((c) => stepOf(c) === step);
    expect(calls.filter((c) => !stepOf(c))).toEqual([]);
    const providers = { planner: 'anthropic', locator: 'google', inspector: 'openai', fixer: 'google' };
    for (const [step, provider] of Object.entries(providers)) {
      expectNoSecret(of(step), secrets, step);
      expect(new Set(of(step).map((c) => c.provider)), step).toEqual(new Set([provider]));
    }
    // Where the repository's text showed each secret, the marker stands: the planner's conventions
    // files, the inspector's and the fixer's view of calc/ops.py, the fixer's repository instructions.
    expectMarkers(of('planner')[0]!.text, secrets, 'the planner’s conventions files');
    expectMarkers(of('fixer')[0]!.text, secrets, 'the fixer’s repository instructions');
    const comment = `# deploy: ${Object.values(secrets)
      .map(() => '[redacted]')
      .join(' ')}`;
    expect(of('inspector')[0]!.text).toContain(comment);
    expect(of('fixer')[0]!.text).toContain(comment);
  });

  it('the agent fixer’s run, the account’s own key: its opening, every turn, the retry and its saved conversation', async () => {
    const { auth, repoUrl, secrets } = await leakyRepo('leaky-agent', true);
    const before = svc.model.calls.length;
    const replace = (from: string, to: string): ToolCallReply => ({
      name: 'editor',
      args: { command: 'replace', path: 'calc/ops.py', old_text: from, new_text: to },
    });
    const mul = (op: string) => `def mul(a, b):\n    return a ${op} b`;
    const submit: ToolCallReply = { name: 'submit', args: { summary: 'add() adds now.' } };
    // Round 1 breaks mul() (a new failure: the validator fails it); round 2 goes on from the saved conversation.
    const turns: ToolCallReply[][] = [
      [{ name: 'bash', args: { command: 'cat AGENTS.md' } }],
      [replace(mul('*'), mul('-'))],
      [submit],
      [replace(mul('-'), mul('*'))],
      [replace('    return a - b', '    return a + b')],
      [submit],
    ];
    let turn = 0;
    let saved: string | undefined;
    const conversation = async () => {
      const root = workRootOf(svc.h.deps.config.dataDir);
      for (const dir of await readdir(root)) {
        const text = await readFile(join(root, dir, 'agent-conversation.json'), 'utf8').catch(() => undefined);
        if (text !== undefined) return text;
      }
      return undefined;
    };
    svc.model.respond(async (req): Promise<Reply | undefined> => {
      if (!req.tools.includes('bash')) return calcStepReply(req);
      // The second round's first request: the first round's conversation is on disk now.
      if (turn === 3) saved = await conversation();
      return { toolCalls: turns[Math.min(turn++, turns.length - 1)]! };
    });
    const { task, byStep } = await runFixTask(svc.h, auth, repoUrl, 'done', { fixer: 'agent' });
    expect(byStep('validator').map((l) => l.status)).toEqual(['failed', 'done']);
    const calls = svc.model.calls.slice(before);
    // Every step on the account's own key (BYOK: its one provider), which the requests never carry in their bodies.
    expect(new Set(calls.map((c) => c.key))).toEqual(new Set([BYOK_KEY]));
    for (const step of ['planner', 'locator', 'inspector'])
      expectNoSecret(
        calls.filter((c) => stepOf(c) === step),
        secrets,
        step,
      );
    const agent = calls.filter((c) => c.tools.includes('bash'));
    expect(agent).toHaveLength(6);
    expectNoSecret(agent, secrets, 'agent fixer');
    // The opening (the repository's instructions) and the observation of `cat AGENTS.md`, in every later turn too.
    for (const call of agent) expectMarkers(call.text, secrets, 'the agent’s opening');
    expectMarkers(agent[1]!.messages.find((m) => m.role === 'tool')!.text, secrets, 'the observation of cat AGENTS.md');
    // The conversation saved for the retry holds the marker, never a secret.
    expect(saved, 'the saved conversation').toBeDefined();
    for (const [kind, value] of Object.entries(secrets))
      expect(saved!.includes(value), `the ${kind} in the saved conversation`).toBe(false);
    expectMarkers(saved!, secrets, 'the saved conversation');
    expect(task.status).toBe('done');
  });
});
