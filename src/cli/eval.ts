import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { BILLING_PLANS } from '../billing/billing-plan.js';
import { chooseModel } from '../workspaces/model-credentials.js';
import { type Config, FIXER_KINDS, type FixerKind, loadConfig } from '../config/config.js';
import { evalDeps } from '../eval/deps.js';
import { NoModelKey } from '../llm/model-choice.js';
import type { Sandbox } from '../sandbox/types.js';
import { DatasetError, type Instance, readDataset } from '../eval/dataset.js';
import { resultLine, summaryMarkdown } from '../eval/report.js';
import { sampleInstances } from '../eval/sample.js';
import { type EvalMode, type InstanceResult, type RepoSetup, type RunOptions, runInstance } from '../eval/run.js';
import { localEnvironmentCache, localSandbox, localToolchainCache } from './local-sandbox.js';
import { ValidationAborted } from '../environments/sandboxed.js';
import { abortOnSignals } from './interrupt.js';
import { findFaketime } from '../test-runs/test-clock.js';

const USAGE =
  'usage: emend eval --dataset F [--oracle | --baseline] [--limit N | --sample N] [--concurrency K] [--out DIR]\n' +
  '                  [--resume] [--logs] [--clock base|now]\n' +
  '                  [--mirrors DIR] [--clone-url URL] [--setup FILE.json] [--plan free|pro|scale]\n' +
  '                  [--fixer pipeline|agent] [--attempts N]\n' +
  'Without --oracle or --baseline, the configured model runs the fix pipeline on each instance,\n' +
  'its fixer the one-shot pipeline fixer (the default) or the tool-using agent (--fixer agent),\n' +
  'in N attempts the validator chooses from (--attempts, 1 by default, at most the plan allows).\n' +
  "--clock base (the default) runs each instance's tests at its base commit's date (libfaketime), --clock now at today's.";

/** The plans an eval may run as (their file and retry limits, and their per-task budget). */
const EVAL_BILLING_PLANS = ['free', 'pro', 'scale'] as const;
type EvalBillingPlan = (typeof EVAL_BILLING_PLANS)[number];

const EXIT_USAGE = 2;
const EXIT_INTERRUPTED = 130;

class UsageError extends Error {}

interface EvalArgs {
  dataset: string;
  mode: EvalMode;
  limit?: number;
  /** A stable subset of this many instances, every repository in turn (src/eval/sample.ts). */
  sample?: number;
  concurrency: number;
  out: string;
  resume: boolean;
  /** Keep each instance's setup and test output in OUT/logs/. */
  logs: boolean;
  mirrors?: string;
  cloneUrl?: string;
  setup?: string;
  plan: EvalBillingPlan;
  fixer: FixerKind;
  /** Fixer attempts per task, the validator choosing (docs/agent.md, "Attempts"). */
  attempts: number;
  /** The tests' clock: the base commit's date (src/test-runs/test-clock.ts) or today's. */
  clock: 'base' | 'now';
}

function count(flag: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`${flag} expects an integer ≥ ${min}`);
  return Number(value);
}

function readArgs(args: string[]): EvalArgs {
  const { values: v } = parseArgs({
    args,
    options: {
      dataset: { type: 'string' },
      limit: { type: 'string' },
      sample: { type: 'string' },
      concurrency: { type: 'string' },
      out: { type: 'string' },
      resume: { type: 'boolean' },
      logs: { type: 'boolean' },
      mirrors: { type: 'string' },
      'clone-url': { type: 'string' },
      setup: { type: 'string' },
      oracle: { type: 'boolean' },
      baseline: { type: 'boolean' },
      plan: { type: 'string' },
      fixer: { type: 'string' },
      attempts: { type: 'string' },
      clock: { type: 'string' },
    },
  });
  if (!v.dataset) throw new UsageError('eval needs --dataset');
  if (v.oracle && v.baseline) throw new UsageError('eval takes one of --oracle and --baseline, not both');
  const plan = v.plan ?? 'pro';
  if (!EVAL_BILLING_PLANS.some((p) => p === plan))
    throw new UsageError(`--plan expects one of ${EVAL_BILLING_PLANS.join(', ')}`);
  if (v.plan && (v.oracle || v.baseline)) throw new UsageError('--plan is for the model mode');
  if (v.fixer !== undefined && !FIXER_KINDS.some((k) => k === v.fixer))
    throw new UsageError(`--fixer expects one of ${FIXER_KINDS.join(', ')}`);
  if (v.fixer && (v.oracle || v.baseline)) throw new UsageError('--fixer is for the model mode');
  // As the service refuses a task's fixer its plan does not offer.
  const offered = BILLING_PLANS[plan as EvalBillingPlan].fixers;
  if (v.fixer && !offered.some((k) => k === v.fixer))
    throw new UsageError(`the ${plan} plan offers the ${offered.join(', ')} fixer, not ${v.fixer}`);
  const attempts = count('--attempts', v.attempts, 1);
  if (attempts !== undefined && (v.oracle || v.baseline)) throw new UsageError('--attempts is for the model mode');
  // As the service refuses more attempts than the plan allows.
  const maxAttempts = BILLING_PLANS[plan as EvalBillingPlan].maxAttempts;
  if (attempts !== undefined && attempts > maxAttempts)
    throw new UsageError(`the ${plan} plan allows at most ${maxAttempts} attempt(s) per task, not ${attempts}`);
  if (v.clock !== undefined && v.clock !== 'base' && v.clock !== 'now')
    throw new UsageError('--clock expects base (the base commit’s date) or now');
  const limit = count('--limit', v.limit, 1);
  const sample = count('--sample', v.sample, 1);
  if (limit !== undefined && sample !== undefined)
    throw new UsageError('eval takes one of --limit (the first N) and --sample (a stable subset of N), not both');
  return {
    dataset: resolve(v.dataset),
    mode: v.oracle ? 'oracle' : v.baseline ? 'baseline' : 'model',
    plan: EVAL_BILLING_PLANS.find((p) => p === plan) ?? 'pro',
    fixer: FIXER_KINDS.find((k) => k === v.fixer) ?? 'pipeline',
    attempts: attempts ?? 1,
    ...(limit !== undefined ? { limit } : {}),
    ...(sample !== undefined ? { sample } : {}),
    concurrency: count('--concurrency', v.concurrency, 1) ?? 1,
    out: resolve(v.out ?? 'emend-eval'),
    resume: v.resume ?? false,
    logs: v.logs ?? false,
    clock: v.clock === 'now' ? 'now' : 'base',
    ...(v.mirrors ? { mirrors: resolve(v.mirrors) } : {}),
    ...(v['clone-url'] ? { cloneUrl: v['clone-url'] } : {}),
    ...(v.setup ? { setup: resolve(v.setup) } : {}),
  };
}

const repoSetup = z.union([
  z.string().transform((command) => ({ command })),
  z.strictObject({ command: z.string().optional(), env: z.record(z.string(), z.string()).optional() }),
]);

/**
 * The operator's setup file: {"owner/name": "command"} or {"owner/name": {"command": "...",
 * "env": {"PYTHONPATH": "..."}}} (env: for the test command, which a setup cannot export to).
 */
async function readSetup(path: string | undefined): Promise<Record<string, RepoSetup>> {
  if (!path) return {};
  const parsed = z.record(z.string(), repoSetup).safeParse(JSON.parse(await readFile(path, 'utf8')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UsageError(`${path}: ${issue.path.join('.') || '(the file)'}: ${issue.message}`);
  }
  return parsed.data;
}

/** The results an earlier run left in results.jsonl (a line cut off by a crash is dropped). */
async function earlierResults(file: string): Promise<InstanceResult[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const out: InstanceResult[] = [];
  for (const line of text.split('\n')) {
    try {
      if (line.trim()) out.push(JSON.parse(line) as InstanceResult);
    } catch {
      // the last line of a run that was killed mid-write
    }
  }
  return out;
}

/** The progress: one line rewritten in place on a terminal, a plain line per instance otherwise. */
function progress(total: number) {
  const tty = process.stderr.isTTY === true;
  let done = 0;
  let resolved = 0;
  return (r: InstanceResult) => {
    done++;
    if (r.resolved) resolved++;
    const line = `[${done}/${total}, ${resolved} resolved] ${resultLine(r)}`;
    if (tty) process.stderr.write(`\r\x1b[K${line.slice(0, (process.stderr.columns ?? 120) - 1)}`);
    else console.log(line);
  };
}

/** Runs the instances K at a time, each result appended to results.jsonl as it ends. */
async function runAll(todo: Instance[], a: EvalArgs, options: RunOptions, file: string): Promise<InstanceResult[]> {
  const report = progress(todo.length);
  const results: InstanceResult[] = [];
  const queue = [...todo];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      if (options.signal?.aborted) return;
      try {
        const result = await runInstance(next, a.mode, options);
        await appendFile(file, `${JSON.stringify(result)}\n`);
        results.push(result);
        report(result);
      } catch (err) {
        if (err instanceof ValidationAborted) return;
        // Not the instance's fault (the sandbox, the disk): no result, so --resume runs it again.
        console.error(`emend: ${next.instance_id}: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(a.concurrency, todo.length) }, worker));
  if (process.stderr.isTTY) process.stderr.write('\n');
  return results;
}

/**
 * `emend eval`: SWE-bench instances judged as the SWE-bench harness judges them, with the gold
 * patch (--oracle, through the fixer's edit path) or nothing (--baseline) as the change.
 * Writes OUT/results.jsonl and OUT/summary.md; exit 0 when every instance ran.
 */
export async function evalCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const inputs = await readInputs(args);
  if (typeof inputs === 'number') return inputs;
  const { a, setup, instances } = inputs;
  const config = loadConfig(env);
  const sandbox = await localSandbox(config);
  if (!sandbox) return 1;
  // The model first: without a key nothing is written, not even an emptied results.jsonl.
  const model = a.mode === 'model' ? await modelContext(config, sandbox, a) : undefined;
  if (typeof model === 'string') {
    console.error(`emend: ${model}`);
    return EXIT_USAGE;
  }
  const prepared = await prepareOut(a, instances);
  if (typeof prepared === 'number') {
    await model?.close();
    return prepared;
  }
  const { file, earlier, todo } = prepared;

  const interrupt = abortOnSignals();
  const environmentCache = localEnvironmentCache(config);
  const faketime = a.clock === 'base' ? findFaketime() : undefined;
  if (a.clock === 'base' && !faketime)
    console.error(
      "emend: libfaketime is not installed, so the tests run at today's date, not their base commit's (apt-get install faketime)",
    );
  try {
    const options: RunOptions = {
      sandbox,
      source: {
        ...(a.mirrors ? { mirrors: a.mirrors } : {}),
        ...(a.cloneUrl ? { urlTemplate: a.cloneUrl } : {}),
      },
      setup,
      limits: { testTimeoutMs: config.validator.testTimeoutMs },
      signal: interrupt.signal,
      // The environments as the validator builds them: toolchains fetched under the setup policy.
      toolchainCache: localToolchainCache(config),
      ...(environmentCache ? { environmentCache } : {}),
      ...(a.logs ? { logsDir: join(a.out, 'logs') } : {}),
      ...(faketime ? { clock: { faketime, now: () => new Date() } } : {}),
      ...(model ? { pipeline: model.pipeline } : {}),
    };
    const results = [...earlier, ...(await runAll(todo, a, options, file))];
    const fixer = (a.fixer === 'agent' ? ', agent fixer' : '') + (a.attempts > 1 ? `, ${a.attempts} attempts` : '');
    const title = a.mode === 'model' ? `emend eval (model, plan ${a.plan}${fixer})` : `emend eval --${a.mode}`;
    await writeFile(join(a.out, 'summary.md'), summaryMarkdown(results, `${title}: ${a.dataset}`));
    const resolved = results.filter((r) => r.resolved).length;
    console.log(`${resolved} of ${results.length} resolved; ${join(a.out, 'summary.md')}`);
    if (interrupt.signal.aborted) return EXIT_INTERRUPTED;
    return results.length === earlier.length + todo.length ? 0 : 1;
  } finally {
    interrupt.release();
    await model?.close();
  }
}

/** The arguments, the setup file and the data set; an exit code (after saying why) when one is wrong. */
async function readInputs(args: string[]) {
  try {
    const a = readArgs(args);
    const setup = await readSetup(a.setup);
    const instances = await readDataset(a.dataset);
    return { a, setup, instances };
  } catch (err) {
    const usage = err instanceof UsageError || (err instanceof TypeError && 'code' in err);
    console.error(`emend: ${(err as Error).message}${usage ? `\n\n${USAGE}` : ''}`);
    return err instanceof DatasetError ? 1 : EXIT_USAGE;
  }
}

/** results.jsonl started or resumed, and the instances still to run; an exit code when the file holds another mode. */
async function prepareOut(a: EvalArgs, instances: Instance[]) {
  await mkdir(a.out, { recursive: true });
  const file = join(a.out, 'results.jsonl');
  const earlier = a.resume ? await earlierResults(file) : [];
  const otherMode = earlier.find((r) => r.mode !== a.mode);
  if (otherMode) {
    // One file, one mode: a summary over both would count the baseline's misses as the oracle's.
    console.error(`emend: ${file} holds ${otherMode.mode} results; --resume continues a run of the same mode`);
    return EXIT_USAGE;
  }
  if (!a.resume) await writeFile(file, '');
  if (a.logs) await mkdir(join(a.out, 'logs'), { recursive: true });
  const done = new Set(earlier.map((r) => r.instance_id));
  const chosen = a.sample !== undefined ? sampleInstances(instances, a.sample) : instances.slice(0, a.limit);
  const todo = chosen.filter((i) => !done.has(i.instance_id));
  if (done.size > 0) console.log(`resuming: ${done.size} instance(s) already in ${file}`);
  return { file, earlier, todo };
}

/**
 * The model mode's steps context: the deps the fix steps get (src/eval/deps.ts) and the plan.
 * The model is chosen as the service chooses it for a managed task (the operator's key from the
 * environment, EMEND_LLM_PROVIDER, EMEND_MODEL_<STEP>, <PROVIDER>_BASE_URL for an OpenAI-compatible
 * server); no key is a usage error before anything runs. The fixer is `--fixer`'s, whatever
 * EMEND_FIXER says (pipeline by default).
 */
async function modelContext(
  config: Config,
  sandbox: Sandbox,
  { plan: billingPlan, fixer, attempts }: Pick<EvalArgs, 'plan' | 'fixer' | 'attempts'>,
) {
  const made = await evalDeps(config, sandbox);
  try {
    const chosen = await chooseModel(made.deps, { workspaceId: '', byok: false }, 'fixer');
    const tries = attempts > 1 ? `, ${attempts} attempts` : '';
    console.log(
      `model: ${chosen.provider}/${chosen.model} at ${chosen.baseUrl} (plan ${billingPlan}, ${fixer} fixer${tries})`,
    );
  } catch (err) {
    await made.close();
    if (err instanceof NoModelKey) return err.message;
    throw err;
  }
  return { pipeline: { deps: made.deps, billingPlan, fixer, attempts }, close: made.close };
}
