import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelClient } from '../../../src/llm/client.js';
import { languageModel } from '../../../src/llm/providers.js';
import { UsageMeter } from '../../../src/llm/usage.js';
import { editRounds, takeAnswer } from '../../../src/steps/fix/edit-rounds.js';
import { type Provider, type ScriptedModel, startScriptedModel } from '../../support/scripted-model/server.js';

const KEY = 'sk-rounds-0123456789';
const MODELS: Record<Provider, string> = {
  openai: 'gpt-4.1',
  anthropic: 'claude-sonnet-4-5',
  google: 'gemini-2.5-pro',
};
const SOURCE = 'def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n';
const block = (search: string, replace: string) =>
  `calc.py\n\`\`\`\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n\`\`\`\n`;
// The first block whole, the second cut off inside its SEARCH part, as a provider ends a long answer.
const CUT = `${block('    return a - b', '    return a + b')}\ncalc.py\n\`\`\`\n<<<<<<< SEARCH\ndef mul(a, b):\n    ret`;

let model: ScriptedModel;
const dirs: string[] = [];
beforeAll(async () => {
  model = await startScriptedModel({ validKeys: [KEY] });
});
afterAll(async () => {
  await model.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(provider: Provider, budgetTokens = 1_000_000) {
  const dir = mkdtempSync(join(tmpdir(), 'emend-rounds-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'calc.py'), SOURCE);
  const logs: { message: string; data?: Record<string, unknown> }[] = [];
  const choice = { provider, model: MODELS[provider], apiKey: KEY, baseUrl: model.urls[provider] };
  const client = new ModelClient({
    choice: { ...choice, source: 'managed', endpoint: 'operator' },
    step: 'fixer',
    model: languageModel(choice, fetch),
    config: { timeoutMs: 10_000, maxRetries: 0, retryBaseMs: 10, prices: {} },
    meter: new UsageMeter(),
    temperature: 0,
    budget: { tokens: budgetTokens, usd: 100, spentTokens: 0, spentUsd: 0 },
    signal: new AbortController().signal,
    log: (message, data) => logs.push({ message, data }),
  });
  const run = () =>
    editRounds(client, {
      system: 'Fix the code.',
      user: 'add and mul are wrong',
      dir,
      maxRounds: 3,
      maxOutputTokens: 4_000,
      log: (message, data) => logs.push({ message, data }),
    });
  return { dir, logs, run };
}

describe('an answer cut off at the output limit', () => {
  it.each(['openai', 'anthropic', 'google'] as const)(
    'is told so, not given a format error, and resends the rest (%s)',
    async (provider) => {
      const { dir, logs, run } = setup(provider);
      const before = model.calls.length;
      model.enqueue(
        { text: CUT, cutOff: true },
        { text: block('def mul(a, b):\n    return a + b', 'def mul(a, b):\n    return a * b') },
      );
      const result = await run();
      expect(result.rounds).toBe(2);
      expect(result.problems).toEqual([]);
      expect(readFileSync(join(dir, 'calc.py'), 'utf8')).toBe(
        'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n',
      );
      const second = model.calls[before + 1]!.messages.at(-1)!.text;
      expect(second).toBe(
        'Your answer was cut off at the output limit (4000 tokens): resend the remaining blocks, smaller ' +
          '(a few lines of SEARCH each, one change per block).\n' +
          'Applied: calc.py (modified). Those edits are in place now.\n' +
          'Send corrected blocks for these only, quoting the current file contents exactly.',
      );
      expect(logs.find((l) => l.message === 'fixer round')!.data).toMatchObject({
        finish_reason: 'length',
        cut_off_at_tokens: 4000,
        format_errors: 1,
      });
    },
  );

  it('says when the budget, not the model, set a limit too small for a block', async () => {
    // The prompt is about 20 tokens; a budget of 700 leaves about 680 for the answer.
    const { logs, run } = setup('openai', 700);
    const before = model.calls.length;
    model.enqueue({ text: CUT, cutOff: true, usage: { input: 20, output: 10 } }, { text: 'Nothing more to change.' });
    await run().catch(() => undefined);
    const lowered = logs.find((l) => l.message === 'the budget lowers the output limit');
    expect(lowered?.data).toMatchObject({ wanted: 4000 });
    const allowed = lowered!.data!.allowed as number;
    expect(allowed).toBeLessThan(1024);
    expect(model.calls[before + 1]!.messages.at(-1)!.text).toContain(
      `cut off at the output limit (${allowed} tokens): resend the remaining blocks, smaller (a few lines of ` +
        `SEARCH each, one change per block). The task's budget leaves only ${allowed} output tokens an answer, ` +
        'too few for large blocks.',
    );
  });
});

describe('the syntax check after a round', () => {
  const end = { finishReason: 'stop', maxOutputTokens: 4_000 };
  const answer = block('    return a - b', '    return a + b');

  it('says nothing of a file that did not parse before the answer either', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-rounds-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'calc.py'), `${SOURCE}\ndef broken(:\n`);
    const taken = await takeAnswer(dir, answer, end, { syntaxCheck: true });
    expect(taken.report.applied).toHaveLength(1);
    expect(taken.syntax).toEqual([]);
  });

  it('shows an error the answer brought in with numbered lines around it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-rounds-'));
    dirs.push(dir);
    writeFileSync(join(dir, 'calc.py'), SOURCE);
    const taken = await takeAnswer(dir, block('    return a - b', '    return (a + b'), end, { syntaxCheck: true });
    expect(taken.syntax.length).toBeGreaterThan(0);
    expect(taken.syntax[0]).toMatch(/^calc\.py: after your edit the file no longer parses: .* at lines? \d/);
    expect(taken.syntax[0]).toContain('2|     return (a + b');
    expect((await takeAnswer(dir, '', end)).syntax).toEqual([]);
  });
});
