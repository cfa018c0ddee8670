import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { evalCommand } from '../../src/cli/eval.js';
import type { InstanceResult } from '../../src/eval/run.js';
import { NO_TEST_FILE } from '../../src/validator/reproduction.js';
import {
  type EvalInstance,
  SRC_ON_PATH,
  buildInstance,
  jsSpec,
  pythonSpec,
  pythonSrcSpec,
  removeEvalRepos,
  writeDataset,
} from '../support/eval-instances.js';
import { evalFix, scriptEvalRun } from '../support/eval-script.js';
import { editBlock, stepOf } from '../support/fix-script.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

const KEY = 'sk-eval-scripted';

// `emend eval` in model mode through its exported command: the service's fix steps against the
// scripted model over real HTTP, real git, the bubblewrap sandbox for the validator and the judge.
describe('emend eval, model mode', { timeout: 240_000 }, () => {
  let root: string;
  let mirrors: string;
  let dataset: string;
  let model: ScriptedModel;
  let instances: EvalInstance[];
  let runs = 0;

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'emend-eval-model-'));
    mirrors = join(root, 'mirrors');
    instances = [
      buildInstance(mirrors, 'acme__pycalc-1', pythonSpec),
      buildInstance(mirrors, 'acme__jscalc-1', jsSpec),
    ];
    dataset = join(root, 'data.jsonl');
    writeDataset(dataset, instances);
    // src/ layout with a conftest that imports the package: without src/ on the path pytest cannot start (exit 4).
    const srcconf = {
      ...pythonSrcSpec,
      repo: 'acme/srcconf',
      base: { ...pythonSrcSpec.base, 'conftest.py': 'import calc  # noqa: F401\n' },
    };
    writeDataset(join(root, 'src.jsonl'), [buildInstance(mirrors, 'acme__srcconf-1', srcconf)]);
    writeFileSync(join(root, 'setup.json'), JSON.stringify({ 'acme/srcconf': SRC_ON_PATH }));
    model = await startScriptedModel({ validKeys: [KEY] });
  });
  afterAll(async () => {
    await model.close();
    removeEvalRepos();
    rmSync(root, { recursive: true, force: true });
  });

  async function run(args: string[], data = dataset, extraEnv: Record<string, string> = {}) {
    const out = join(root, `out-${runs++}`);
    const printed: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: string) => printed.push(line));
    vi.spyOn(console, 'error').mockImplementation((line: string) => printed.push(line));
    const env = {
      EMEND_DATA_DIR: join(root, 'data'),
      EMEND_SANDBOX: 'bubblewrap',
      LOG_LEVEL: 'warn',
      OPENAI_API_KEY: KEY,
      OPENAI_BASE_URL: model.urls.openai,
      EMEND_LLM_RETRY_BASE_MS: '10',
      ...extraEnv,
    };
    const code = await evalCommand(['--out', out, '--mirrors', mirrors, '--dataset', data, ...args], env);
    vi.restoreAllMocks();
    const results: InstanceResult[] = readFileSync(join(out, 'results.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const byId = (id: string) => results.find((r) => r.instance_id === id)!;
    return { code, printed: printed.join('\n'), summary: readFileSync(join(out, 'summary.md'), 'utf8'), byId };
  }

  it("the model's right fix resolves both instances; validator and judge agree; tokens, cost and times are kept", async () => {
    scriptEvalRun(model);
    const { code, printed, summary, byId } = await run([]);
    expect(code, printed).toBe(0);
    expect(printed).toContain('model: openai/gpt-4.1');
    for (const id of ['acme__pycalc-1', 'acme__jscalc-1']) {
      const r = byId(id);
      expect(r.mode).toBe('model');
      expect(r.resolved, JSON.stringify(r)).toBe(true);
      expect(r.f2p).toEqual({ passed: 1, total: 1 });
      const p = r.pipeline!;
      expect(p.failure).toBeUndefined();
      expect(p.steps.map((s) => s.step)).toEqual(['planner', 'locator', 'inspector', 'fixer', 'validator']);
      expect(p.validator).toBe(true);
      expect(p.agrees).toBe(true);
      expect(p.gold_files).toEqual([id.includes('py') ? 'calc.py' : 'src/lib.js']);
      expect(p.gold_located).toBe(true);
      expect(r.edits).toEqual({ applied: 1, failures: [] });
      for (const s of p.steps) expect(s.ms, s.step).toBeGreaterThan(0);
      for (const s of p.steps.filter((s) => s.step !== 'validator')) {
        expect(s.calls, s.step).toBe(1);
        expect(s.input_tokens, s.step).toBeGreaterThan(0);
        expect(s.output_tokens, s.step).toBeGreaterThan(0);
        expect(s.cost_usd, s.step).toBeGreaterThan(0);
      }
      expect(p.steps.find((s) => s.step === 'locator')!.model).toBe('openai/gpt-4.1-mini');
    }
    // The double's billed usage is what the results add up to.
    const billed = model.billed();
    const steps = [byId('acme__pycalc-1'), byId('acme__jscalc-1')].flatMap((r) => r.pipeline!.steps);
    expect(steps.reduce((n, s) => n + s.input_tokens, 0)).toBe(billed.input);
    expect(steps.reduce((n, s) => n + s.output_tokens, 0)).toBe(billed.output);
    expect(summary).toContain('- resolved: 2 (100.0% of all');
    expect(summary).toContain('- gold file located: 2 (100.0%)');
    expect(summary).toContain('- validator agrees with the judge: 2 of 2 (100.0%); no validator verdict on 0');
    expect(byId('acme__pycalc-1').pipeline!.validation).toMatchObject({
      command: expect.stringContaining('pytest'),
      tests: { passed: 1, failed: 0, skipped: 0 },
      new_failures: [],
      reproduction: NO_TEST_FILE,
    });
    expect(summary).toMatch(/\| fixer \| 2 \| 0 \| \d+ \| \d+ \| \$0\.\d{4} \|/);
  });

  it('a wrong fix is not resolved and names the failing test; a model error fails its instance and the run goes on', async () => {
    const before = model.calls.length;
    // The Python instance runs first: its planner call is refused for good (400, not retried).
    model.enqueue({ status: 400, body: { error: { message: 'model overloaded by the test', type: 'invalid' } } });
    scriptEvalRun(model, (lang) => evalFix(lang, false));
    const { code, printed, summary, byId } = await run([]);
    expect(code, printed).toBe(0);

    const failed = byId('acme__pycalc-1');
    expect(failed.resolved).toBe(false);
    expect(failed.setup.failure?.stage).toBe('pipeline');
    expect(failed.setup.failure?.reason).toMatch(/^planner failed: .*model overloaded by the test/);
    expect(failed.pipeline!.steps.map((s) => `${s.step}:${s.status}`)).toEqual(['planner:failed']);
    expect(failed.pipeline!.agrees).toBeNull();

    const wrong = byId('acme__jscalc-1');
    expect(wrong.resolved).toBe(false);
    expect(wrong.setup.ok).toBe(true);
    expect(wrong.not_passed).toEqual(['adds']);
    expect(wrong.f2p).toEqual({ passed: 0, total: 1 });
    expect(wrong.p2p).toEqual({ passed: 1, total: 1 });
    // No test of the repository fails with the wrong fix: the validator passes it, the judge does not.
    expect(wrong.pipeline!.validator).toBe(true);
    expect(wrong.pipeline!.agrees).toBe(false);
    const fixerCalls = model.calls.slice(before).filter((c) => stepOf(c) === 'fixer');
    expect(fixerCalls).toHaveLength(1);

    expect(summary).toContain('- resolved: 0 (0.0% of all');
    expect(summary).toContain('- pipeline failures: 1');
    expect(summary).toContain('- validator agrees with the judge: 0 of 1 (0.0%)');
    expect(summary).toMatch(/## Pipeline failures\n\n- acme__pycalc-1 \(planner\): .*model overloaded by the test/);
    expect(summary).toMatch(/- acme__jscalc-1: `adds`/);
  });

  it('runs the fixer again after a failed validation, as the runner does; a refused edit is sent back and counted', async () => {
    // Answer 1 quotes a line that is not there; answer 2 fixes add() but breaks mul(); the
    // validator fails it and the fixer's retry repairs mul().
    const answers = [
      editBlock('    return a - b  # subtract', '    return a + b', 'calc.py'),
      editBlock(
        '    return a - b\n\n\ndef mul(a, b):\n    return a * b',
        '    return a + b\n\n\ndef mul(a, b):\n    return a + b',
        'calc.py',
      ),
      editBlock('def mul(a, b):\n    return a + b', 'def mul(a, b):\n    return a * b', 'calc.py'),
    ];
    let n = 0;
    scriptEvalRun(model, () => answers[Math.min(n++, answers.length - 1)]!);
    const { code, printed, summary, byId } = await run(['--limit', '1']);
    expect(code, printed).toBe(0);
    const r = byId('acme__pycalc-1');
    expect(r.resolved, JSON.stringify(r)).toBe(true);
    const p = r.pipeline!;
    expect(p.steps.map((s) => `${s.step}:${s.round}:${s.status}`)).toEqual([
      'planner:0:done',
      'locator:0:done',
      'inspector:0:done',
      'fixer:0:done',
      'validator:0:done',
      'fixer:1:done',
      'validator:1:done',
    ]);
    expect(p.steps.filter((s) => s.step === 'fixer').map((s) => [s.calls, s.sent_back])).toEqual([
      [2, 1],
      [1, 0],
    ]);
    // The last verdict counts: the retry passed, and the judge resolved it.
    expect(p.validator).toBe(true);
    expect(p.agrees).toBe(true);
    expect(r.edits).toEqual({ applied: 2, failures: [] });
    expect(summary).toContain('- fixer answers sent back: 1 (');
    expect(summary).toMatch(/\| fixer \| 2 \| 0 \|/);
    expect(summary).toMatch(/\| validator \| 2 \| 0 \|/);
  });

  it('--attempts 3 with answers that differ per attempt: the one right of three is chosen, and resolves', async () => {
    // Each attempt's calls carry its temperature (0, 0.5, 1): attempts 1 and 3 fix add() but break mul().
    const breaksMul = editBlock('def mul(a, b):\n    return a * b', 'def mul(a, b):\n    return a + b', 'calc.py');
    const wrong = `${breaksMul}\n${editBlock('    return a - b', '    return a + b', 'calc.py')}`;
    const before = model.calls.length;
    scriptEvalRun(model, (lang, req) =>
      (req.body as { temperature?: number }).temperature === 0.5 ? evalFix(lang) : wrong,
    );
    const { code, printed, summary, byId } = await run(['--limit', '1', '--attempts', '3']);
    expect(code, printed).toBe(0);
    expect(printed).toContain('(plan pro, pipeline fixer, 3 attempts)');
    const r = byId('acme__pycalc-1');
    expect(r.resolved, JSON.stringify(r.pipeline)).toBe(true);
    const p = r.pipeline!;
    expect(p.attempts!.map((a) => [a.attempt, a.temperature, a.passed, a.chosen])).toEqual([
      [1, 0, false, false],
      [2, 0.5, true, true],
      [3, 1, false, false],
    ]);
    expect(p.choice).toEqual({ attempt: 2, reason: 'attempt 2: its validation passed (attempt 1: failed)' });
    // One fixer step (its three attempts) and one validator step, which took the chosen attempt's verdict.
    expect(p.steps.map((s) => `${s.step}:${s.status}`)).toEqual([
      'planner:done',
      'locator:done',
      'inspector:done',
      'fixer:done',
      'validator:done',
    ]);
    expect(p.steps.find((s) => s.step === 'fixer')!.calls).toBe(3);
    expect(model.calls.slice(before).filter((c) => stepOf(c) === 'fixer')).toHaveLength(3);
    expect(p.validator).toBe(true);
    expect(summary).toContain('# emend eval (model, plan pro, 3 attempts)');
    expect(summary).toContain('## Attempts per instance');
    expect(summary).toMatch(
      /\| acme__pycalc-1 \| 1: failed, 2: passed \(chosen\), 3: failed \| 2 \| attempt 2: its validation passed/,
    );
  });

  it('--attempts 3 with none right: the best goes on as a single run would, and is not resolved', async () => {
    const breaksMul = editBlock('def mul(a, b):\n    return a * b', 'def mul(a, b):\n    return a + b', 'calc.py');
    // After the failed verdict the retries leave mul() broken (a comment each time).
    scriptEvalRun(model, (_lang, req) =>
      req.text.includes('did not pass validation')
        ? editBlock('def mul(a, b):', '# checked\ndef mul(a, b):', 'calc.py')
        : breaksMul,
    );
    const { code, printed, byId } = await run(['--limit', '1', '--attempts', '3']);
    expect(code, printed).toBe(0);
    const r = byId('acme__pycalc-1');
    expect(r.resolved).toBe(false);
    const p = r.pipeline!;
    expect(p.attempts!.map((a) => a.passed)).toEqual([false, false, false]);
    // All alike: the earliest.
    expect(p.choice!.attempt).toBe(1);
    expect(p.steps.map((s) => `${s.step}:${s.round}:${s.status}`).slice(3)).toEqual([
      'fixer:0:done',
      'validator:0:done',
      'fixer:1:done',
      'validator:1:done',
      'fixer:2:done',
      'validator:2:done',
    ]);
    expect(p.validator).toBe(false);
  });

  it('--attempts is for the model mode, within the plan', async () => {
    const printed: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((line: string) => printed.push(line));
    expect(await evalCommand(['--dataset', dataset, '--oracle', '--attempts', '2'], {})).toBe(2);
    expect(await evalCommand(['--dataset', dataset, '--attempts', '4'], {})).toBe(2);
    expect(await evalCommand(['--dataset', dataset, '--attempts', '2', '--plan', 'free'], {})).toBe(2);
    expect(await evalCommand(['--dataset', dataset, '--attempts', '0'], {})).toBe(2);
    vi.restoreAllMocks();
    const said = printed.join('\n');
    expect(said).toContain('--attempts is for the model mode');
    expect(said).toContain('the pro plan allows at most 3 attempt(s) per task, not 4');
    expect(said).toContain('the free plan allows at most 1 attempt(s) per task, not 2');
    expect(said).toContain('--attempts expects an integer ≥ 1');
  });

  it("a validator without the operator's setup has no verdict: left out of the agreement, counted, its note kept", async () => {
    scriptEvalRun(model);
    // The judge gets the setup (src/ on the path); the validator, as the service runs it, does not.
    const { code, printed, summary, byId } = await run(['--setup', join(root, 'setup.json')], join(root, 'src.jsonl'));
    expect(code, printed).toBe(0);
    const r = byId('acme__srcconf-1');
    expect(r.resolved, JSON.stringify(r)).toBe(true);
    expect(r.pipeline!.validator, JSON.stringify(r.pipeline!.validation)).toBeNull();
    expect(r.pipeline!.agrees).toBeNull();
    expect(r.pipeline!.validation?.message).toMatch(/could not be validated/);
    expect(summary).toContain('- validator agrees with the judge: 0 of 0 (0.0%); no validator verdict on 1');
  });

  it('reports the cost as unknown for a model the price table does not know, and its tokens all the same', async () => {
    scriptEvalRun(model);
    const { code, printed, summary, byId } = await run(['--limit', '1', '--plan', 'free'], dataset, {
      EMEND_MODEL_FIXER: 'openai:my-local-model',
      // A model the service has no window for must be given one.
      EMEND_MODEL_CONTEXT_FIXER: '128000',
    });
    expect(code, printed).toBe(0);
    const r = byId('acme__pycalc-1');
    expect(r.pipeline!.failure, JSON.stringify(r.pipeline)).toBeUndefined();
    const steps = r.pipeline!.steps;
    const fixer = steps.find((s) => s.step === 'fixer')!;
    expect(fixer.model).toBe('openai/my-local-model');
    expect(fixer.cost_usd).toBeNull();
    expect(fixer.input_tokens).toBeGreaterThan(0);
    expect(steps.find((s) => s.step === 'planner')!.cost_usd).toBeGreaterThan(0);
    expect(summary).toContain('# emend eval (model, plan free)');
    expect(summary).toContain('- cost: unknown (the price table does not know the model');
    expect(summary).toMatch(/\| fixer \| 1 \| 0 \| \d+ \| \d+ \| \? \|/);
  });
});
