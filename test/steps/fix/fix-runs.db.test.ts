import { afterEach, describe, expect, it } from 'vitest';
import { CALC_PLAN, CALC_REPO, GOOD_FIX, editBlock, scriptCalcRun, stepOf } from '../../support/fix-script.js';
import { type Harness, newAccount } from '../../support/harness.js';
import {
  MANAGED_KEY,
  type ModelService,
  type Provider,
  runFixTask,
  startModelService,
} from '../../support/model-service.js';
import type { ScriptedModel } from '../../support/scripted-model/server.js';
import { REPRODUCTION_RULE } from '../../../src/steps/fix/reproduction-messages.js';

let svc: ModelService | undefined;
let h: Harness;
let model: ScriptedModel;
let repoUrl: string;

afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

async function service(
  env: Record<string, string> = {},
  provider: Provider | null = 'openai',
  extraFiles: Record<string, string> = {},
) {
  svc = await startModelService(env, provider);
  ({ h, model } = svc);
  h.github.createRepo('acme', 'calc', { files: { ...CALC_REPO, ...extraFiles } });
  repoUrl = `${h.github.webUrl}/acme/calc`;
}

const runTask = (auth: Record<string, string>, status: 'done' | 'failed', body: Record<string, unknown> = {}) =>
  runFixTask(h, auth, repoUrl, status, body);

const billedTotal = () => model.billed().input + model.billed().output;

describe('fix tasks through the model steps against the scripted model', { timeout: 150_000 }, () => {
  it('preview mode: plan, locate, inspect, fix, validate for real, pr skipped; tokens and cost as billed', async () => {
    // one model for every step here, so the cost can be checked against one price
    await service({ EMEND_MODEL_LOCATOR: 'openai:gpt-4.1' });
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task, logs, byStep } = await runTask(auth, 'done');
    expect(logs.map((l) => `${l.step}:${l.status}`)).toEqual([
      'planner:done',
      'locator:done',
      'inspector:done',
      'fixer:done',
      'validator:done',
      'pr:skipped',
    ]);
    expect(byStep('planner')[0]!.output).toMatchObject({
      summary: expect.stringContaining('sum'),
      likely_files: ['calc/ops.py'],
      model: 'openai/gpt-4.1',
    });
    expect((byStep('locator')[0]!.output.selected as string[])[0]).toBe('calc/ops.py');
    expect(byStep('locator')[0]!.output.reranked).toBe(true);
    // the re-rank sees each shortlisted file's outline, from the locator's index
    expect(model.calls.find((c) => stepOf(c) === 'locator')!.text).toMatch(
      /## calc\/ops\.py\nfound by: .*\n```\n\s+1-3 \w+ add\n\s+6-7 \w+ mul\n```/,
    );
    expect((byStep('inspector')[0]!.output.insights as unknown[])[0]).toMatchObject({
      file: 'calc/ops.py',
      relevance: 'high',
    });
    const fixer = byStep('fixer')[0]!.output;
    expect(fixer.diff).toContain('-    return a - b\n+    return a + b');
    expect(fixer.files_changed).toEqual([{ path: 'calc/ops.py', kind: 'modified' }]);
    expect(byStep('validator')[0]!.output).toMatchObject({ passed: true, fixed: ['tests/test_ops.py::test_add'] });
    expect(task.diff_summary).toBe(fixer.diff);
    // every billed token reached the task, priced at gpt-4.1's list price
    expect(task.tokens_total).toBe(billedTotal());
    const b = model.billed();
    expect(task.cost_usd).toBeCloseTo((b.input * 2 + b.output * 8) / 1e6, 6);
    expect(model.calls.every((c) => c.key === MANAGED_KEY && c.provider === 'openai')).toBe(true);
    // the fixer streams; the structured steps asked for JSON
    expect(model.calls.filter((c) => stepOf(c) === 'fixer').every((c) => c.stream)).toBe(true);
    expect(model.calls.filter((c) => stepOf(c) === 'planner').every((c) => c.structured)).toBe(true);
  });

  it('a demo token stops after the inspector, whose summary is the result', async () => {
    await service({}, 'anthropic');
    scriptCalcRun(model);
    const demo = await h.app.inject({
      method: 'POST',
      url: '/v1/demo/token',
      payload: { email: 'visitor@example.com' },
    });
    expect(demo.statusCode, demo.body).toBe(201);
    const { task, logs, byStep } = await runTask({ authorization: `Bearer ${demo.json().token}` }, 'done');
    expect(logs.map((l) => `${l.step}:${l.status}`)).toEqual([
      'planner:done',
      'locator:done',
      'inspector:done',
      'fixer:skipped',
      'validator:skipped',
      'pr:skipped',
    ]);
    expect(byStep('inspector')[0]!.output.summary).toMatch(/calc\/ops\.py/);
    expect(task.diff_summary ?? null).toBeNull();
    expect(model.calls.some((c) => stepOf(c) === 'fixer')).toBe(false);
    expect(model.calls.every((c) => c.provider === 'anthropic')).toBe(true);
  });

  it('a fix that breaks another test goes back to the fixer with the failure and its previous diff', async () => {
    // Modules about add() that outrank the test file, so the free plan's five files leave it out.
    const more = Object.fromEntries(
      ['sum', 'plus', 'total', 'accumulate'].map((n) => [
        `calc/${n}.py`,
        `from calc.ops import add\n\n\ndef ${n}(a, b):\n    # add() in calc/ops.py subtracts instead of adding\n    return add(a, b)\n`,
      ]),
    );
    await service({}, 'openai', more);
    const breaksMul = editBlock(
      'def add(a, b):\n    """Return the sum of a and b."""\n    return a - b\n\n\ndef mul(a, b):\n    return a * b',
      'def add(a, b):\n    """Return the sum of a and b."""\n    return a + b\n\n\ndef mul(a, b):\n    return a + b',
    );
    const repairsMul = editBlock('def mul(a, b):\n    return a + b', 'def mul(a, b):\n    return a * b');
    const { fixerCalls } = scriptCalcRun(model, [breaksMul, repairsMul]);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task, byStep } = await runTask(auth, 'done');
    expect(task.retry_count).toBe(1);
    expect(byStep('validator').map((l) => l.status)).toEqual(['failed', 'done']);
    const [first, retry] = fixerCalls();
    expect(retry!.text).toContain('tests/test_ops.py::test_mul');
    expect(retry!.text).toContain('+    return a + b'); // the previous diff
    // The failing test told by pytest's assertion and the line it failed at, not by the output's end...
    expect(retry!.text).toContain('assert 5 == 6\n+  where 5 = mul(2, 3)');
    expect(retry!.text).toContain('failed at tests/test_ops.py:9');
    expect(retry!.text).not.toContain('Test output (end)');
    // ...and the test file, which the locator had not selected, joins the view.
    expect(first!.text).not.toContain('## tests/test_ops.py');
    expect(retry!.text).toContain('## tests/test_ops.py\n');
    expect(byStep('validator')[0]!.output.failure_details).toEqual([
      {
        test: 'tests/test_ops.py::test_mul',
        test_file: 'tests/test_ops.py',
        message: 'assert 5 == 6\n+  where 5 = mul(2, 3)',
        frame: { path: 'tests/test_ops.py', line: 9 },
      },
    ]);
    // the diff after the retry is cumulative against the base: add fixed, mul as it was
    const final = byStep('fixer')[1]!.output.diff as string;
    const changed = final.split('\n').filter((l) => /^[-+](?![-+]{2})/.test(l));
    expect(changed).toEqual(['-    return a - b', '+    return a + b']);
  });

  it('a reproduction test that still fails sends the fixer back with that signal; the fix then passes with it', async () => {
    await service();
    const id = 'tests/test_add_negatives.py::test_add_negatives';
    const testOnly = editBlock(
      '',
      'from calc.ops import add\n\n\ndef test_add_negatives():\n    assert add(-2, -3) == -5\n',
      'tests/test_add_negatives.py',
    );
    const { fixerCalls } = scriptCalcRun(model, [`A test that reproduces it first.\n\n${testOnly}`, GOOD_FIX]);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task, byStep } = await runTask(auth, 'done');
    expect(task.retry_count).toBe(1);
    const [first, second] = byStep('validator').map((l) => l.output);
    // the test alone: it fails on the base commit and still fails with the change
    expect(first).toMatchObject({
      passed: false,
      new_failures: [id],
      reproduction: { rule: 'reproduction', failed_on_base: [id], now_passing: [], still_failing: [id] },
    });
    const [attempt, retry] = fixerCalls();
    expect(attempt!.system).toContain(REPRODUCTION_RULE);
    expect(retry!.text).toContain(`Your reproduction test still fails with your change: \`${id}\`.`);
    expect(retry!.text).toContain('assert 1 == -5');
    // the fix on top of the test: reproduced, and the base run (same test file) kept from the first validation
    expect(second).toMatchObject({
      passed: true,
      reproduction: { rule: 'reproduction', now_passing: [id], still_failing: [] },
      baseline: first!.baseline,
    });
  });

  it('stops at the budget instead of overspending, and says so', async () => {
    await service({ EMEND_TASK_BUDGET_TOKENS_FREE: '2000' });
    model.enqueue({ json: CALC_PLAN, usage: { input: 1500, output: 300 } });
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task, byStep } = await runTask(auth, 'failed');
    expect(task.error).toMatch(/budget of 2,000 tokens/);
    expect(byStep('planner')[0]!.status).toBe('done');
    expect(task.tokens_total).toBe(1800);
    expect(task.tokens_total).toBeLessThanOrEqual(2000);
    expect(model.calls).toHaveLength(1);
  });

  it('a provider answering 429 is retried after the wait it asked for, then the run goes on', async () => {
    await service();
    model.enqueue({ status: 429, headers: { 'retry-after': '0' } });
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task } = await runTask(auth, 'done');
    const planner = model.calls.filter((c) => stepOf(c) === 'planner');
    expect(planner).toHaveLength(2);
    expect(task.tokens_total).toBe(billedTotal());
    // the re-rank is a short call: the provider's quick model unless configured
    expect(model.calls.filter((c) => stepOf(c) === 'locator').map((c) => c.model)).toEqual(['gpt-4.1-mini']);
  });

  it('a call that outlives the timeout is abandoned and retried', async () => {
    await service({ EMEND_LLM_TIMEOUT_S: '3' });
    model.enqueue(async () => {
      await new Promise((r) => setTimeout(r, 4_500));
      return { json: CALC_PLAN };
    });
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task } = await runTask(auth, 'done');
    expect(model.calls.filter((c) => stepOf(c) === 'planner')).toHaveLength(2);
    expect(h.logLines.some((l) => l.includes('did not answer in time'))).toBe(true);
    // the abandoned call was answered to nobody: neither the double nor the task bills it
    expect(task.tokens_total).toBe(billedTotal());
  });

  it('malformed output is billed, counted, fed back, and recovered from (planner JSON and fixer edits)', async () => {
    await service();
    model.enqueue({ text: 'Sure! Here is my plan: fix add.' });
    const wrongSearch = editBlock('    return a - b  # subtract', '    return a + b');
    const { fixerCalls } = scriptCalcRun(model, [
      'I will fix it.\n\ncalc/ops.py\n<<<<<<< SEARCH\n    return a - b\n=======\n',
      wrongSearch,
      GOOD_FIX,
    ]);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task, byStep } = await runTask(auth, 'done');
    const planner = model.calls.filter((c) => stepOf(c) === 'planner');
    expect(planner).toHaveLength(2);
    expect(planner[1]!.text).toContain('could not be used');
    expect(byStep('planner')[0]!.output.malformed_answers).toBe(1);
    const fixer = byStep('fixer')[0]!.output;
    expect(fixer.rounds).toBe(3);
    expect(fixer.malformed_answers).toBe(2);
    expect(fixerCalls()[1]!.text).toMatch(/format: .*calc\/ops\.py/);
    expect(fixerCalls()[2]!.text).toMatch(/did not apply/);
    expect(fixer.diff).toContain('+    return a + b');
    expect(task.tokens_total).toBe(billedTotal());
  });

  it('BYOK: the account’s own key is used (google here), the managed key never, and the task costs nothing', async () => {
    // the account's base_url is the double on 127.0.0.1, which the address policy refuses unless allowed
    await service({ EMEND_OUTBOUND_ALLOW: '127.0.0.1' }, 'openai');
    const byokKey = 'AIza-account-own-key-42';
    model.validKeys.add(byokKey);
    scriptCalcRun(model);
    const { auth } = await newAccount(h, { plan: 'free' });
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/v1/me/keys',
          headers: auth,
          payload: { provider: 'google', api_key: byokKey, base_url: model.urls.google },
        })
      ).statusCode,
    ).toBe(201);
    expect(
      (await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: true } }))
        .statusCode,
    ).toBe(200);
    const { task } = await runTask(auth, 'done');
    expect(model.calls.length).toBeGreaterThanOrEqual(4);
    expect(model.calls.every((c) => c.key === byokKey && c.provider === 'google')).toBe(true);
    expect(model.requests.some((r) => JSON.stringify(r.headers).includes(MANAGED_KEY))).toBe(false);
    expect(task.cost_usd).toBe(0);
    expect(task.tokens_total).toBe(billedTotal());
    expect(h.logLines.join('\n')).not.toContain(byokKey);
  });

  it('with no key at all the task is refused before it exists, saying which keys to set (issue 45: no longer a planner failure)', async () => {
    await service({ OPENAI_API_KEY: '' }, null);
    const { auth } = await newAccount(h, { plan: 'free' });
    const refused = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: { prompt: 'fix the bug in add', repo_url: repoUrl },
    });
    expect([refused.statusCode, refused.json().error]).toEqual([412, 'model_not_configured']);
    expect(refused.json().message).toMatch(/OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY/);
    expect(model.calls).toHaveLength(0);
  });

  it('with a key the provider rejects the task fails at the planner, naming the provider, the model and the status', async () => {
    await service({ OPENAI_API_KEY: 'sk-not-the-managed-key' }, null);
    const { auth } = await newAccount(h, { plan: 'free' });
    const { task, byStep } = await runTask(auth, 'failed');
    expect(task.error).toBe('planner failed: openai rejected the API key for gpt-4.1 (HTTP 401)');
    expect(byStep('planner')[0]!.status).toBe('failed');
  });
});
