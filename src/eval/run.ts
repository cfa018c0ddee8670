import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import { type TestRunTimeouts, ValidationAborted } from '../environments/sandboxed.js';
import type { TaskCheckout } from '../checkout/checkout.js';
import { clockEnv } from '../test-runs/test-clock.js';
import { type RepoSource, checkoutAt } from './checkout.js';
import type { Instance } from './dataset.js';
import { type JudgeSetup, type Verdict, judge } from './judge.js';
import { type EditOutcome, applyGoldPatch } from './oracle.js';
import { type PipelineContext, type PipelineOutcome, goldFiles, runPipeline } from './pipeline.js';
import type { ToolchainCache } from '../environments/toolchain-cache.js';
import type { EnvironmentCache } from '../environments/env-cache.js';

/**
 * What makes the change: `model` the fix pipeline with the configured model (src/eval/pipeline.ts),
 * `oracle` the gold patch through the fixer's edit path, `baseline` nothing (the unchanged
 * checkout, which must resolve nothing).
 */
export type EvalMode = 'model' | 'oracle' | 'baseline';

/** The model mode's account of one instance: the pipeline's run, and how it compares with the gold patch and the judge. */
export interface PipelineResult extends PipelineOutcome {
  /** The files the instance's gold patch changes (measurement only: the pipeline never sees the patch). */
  gold_files: string[];
  /** Whether one of them is among the files the locator passed on. */
  gold_located: boolean;
  /** Whether the validator's verdict is the judge's: null when either has none (no tests found, not judged). */
  agrees: boolean | null;
}

/** One line of results.jsonl. */
export interface InstanceResult extends Verdict {
  instance_id: string;
  repo: string;
  mode: EvalMode;
  /** The edits: the oracle's (the gold patch's blocks) or the fixer's over all its runs. */
  edits?: EditOutcome;
  /** Model mode: what the pipeline did. */
  pipeline?: PipelineResult;
}

/** What the operator's setup file gives one repository. */
export interface RepoSetup {
  command?: string;
  env?: Record<string, string>;
}

export interface RunOptions {
  sandbox: Sandbox;
  source: RepoSource;
  /** Per-repository setup (owner/name → the command and the tests' environment). */
  setup: Record<string, RepoSetup>;
  limits?: Partial<TestRunTimeouts>;
  signal?: AbortSignal;
  tmpRoot?: string;
  /** Model mode: the steps' deps and the plan whose limits and budget a run has. */
  pipeline?: Omit<PipelineContext, 'signal'>;
  /** Fetches the node, pnpm or yarn an instance's repository asks for, as the validator does. */
  toolchainCache?: ToolchainCache;
  /**
   * The environment cache, as tasks use it: an instance's environment is built once per base
   * commit and manifests (so the baseline and the oracle of one instance share it, and instances
   * with the same lockfile share one). Entries are keyed by the repository under the account `eval`.
   */
  environmentCache?: EnvironmentCache;
  /** A directory for each instance's setup and test output, `<instance_id>.log` (`emend eval --logs`). */
  logsDir?: string;
  /**
   * Run each instance's tests at its base commit's date (src/test-runs/test-clock.ts): libfaketime's
   * path, and the clock that says what today is. Without it the tests run at today's date.
   */
  clock?: { faketime: string; now: () => Date };
}

type Head = Pick<InstanceResult, 'instance_id' | 'repo' | 'mode'>;

/** A result for an instance whose tests never ran. */
function notJudged(instance: Instance, head: Head, setup: JudgeSetup, started: number): InstanceResult {
  return {
    ...head,
    resolved: false,
    f2p: { passed: 0, total: instance.FAIL_TO_PASS.length },
    p2p: { passed: 0, total: instance.PASS_TO_PASS.length },
    not_passed: [...instance.FAIL_TO_PASS, ...instance.PASS_TO_PASS],
    setup,
    wall_ms: Math.round(performance.now() - started),
  };
}

/**
 * Checks out the instance's base commit, makes the mode's change, judges it; never throws for
 * the instance's own faults (a model error or a failed step is the instance's result).
 */
export async function runInstance(instance: Instance, mode: EvalMode, options: RunOptions): Promise<InstanceResult> {
  const started = performance.now();
  const work = await mkdtemp(join(options.tmpRoot ?? tmpdir(), 'emend-eval-'));
  const head: Head = { instance_id: instance.instance_id, repo: instance.repo, mode };
  try {
    const dir = join(work, 'repo');
    // The pipeline runs repository code on the files: its git directory stays outside them, as a task's does.
    const gitDir = mode === 'model' ? join(work, 'git') : join(dir, '.git');
    let commit: string;
    let date: Date;
    try {
      ({ commit, date } = await checkoutAt(
        instance.repo,
        instance.base_commit,
        dir,
        options.source,
        join(work, 'git-home'),
        gitDir,
      ));
    } catch (err) {
      return notJudged(
        instance,
        head,
        { ok: false, failure: { stage: 'checkout', reason: (err as Error).message } },
        started,
      );
    }
    let pipeline: PipelineOutcome | undefined;
    let edits: EditOutcome | undefined;
    if (mode === 'oracle') edits = await applyGoldPatch(dir, instance.patch);
    if (mode === 'model') {
      pipeline = await runModel(instance, { root: work, dir, gitDir, commit }, options);
      edits = pipeline.edits;
      if (pipeline.failure) {
        const reason = `${pipeline.failure.step} failed: ${pipeline.failure.reason}`;
        const result = notJudged(instance, head, { ok: false, failure: { stage: 'pipeline', reason } }, started);
        return { ...result, edits, pipeline: measured(instance, pipeline, undefined) };
      }
    }
    const verdict = await judgeChange(dir, instance, options, { gitDir, commit, date });
    return {
      ...head,
      ...verdict,
      ...(edits ? { edits } : {}),
      ...(pipeline ? { pipeline: measured(instance, pipeline, verdict) } : {}),
      wall_ms: Math.round(performance.now() - started),
    };
  } finally {
    await rm(work, { recursive: true, force: true }).catch(() => {});
  }
}

/** The fix pipeline on the checkout; an interrupted run is no result (--resume runs it again). */
async function runModel(
  instance: Instance,
  at: { root: string; dir: string; gitDir: string; commit: string },
  options: RunOptions,
): Promise<PipelineOutcome> {
  if (!options.pipeline) throw new Error('model mode needs the pipeline context');
  const signal = options.signal ?? new AbortController().signal;
  const checkout: TaskCheckout = {
    root: at.root,
    dir: at.dir,
    gitDir: at.gitDir,
    baseBranch: at.commit,
    baseCommit: at.commit,
    dispose: async () => {},
  };
  const outcome = await runPipeline(checkout, instance, { ...options.pipeline, signal });
  if (signal.aborted) throw new ValidationAborted();
  return outcome;
}

function judgeChange(
  dir: string,
  instance: Instance,
  options: RunOptions,
  at: { gitDir: string; commit: string; date: Date },
): Promise<Verdict> {
  const setup = options.setup[instance.repo] ?? {};
  const clock = options.clock ? clockEnv(options.clock.faketime, at.date, options.clock.now()) : undefined;
  const cache = options.environmentCache;
  return judge(dir, instance, {
    sandbox: options.sandbox,
    // A repository the operator's file names gets its command instead of the detected install (none: no install).
    ...(options.setup[instance.repo] ? { setupCommand: setup.command ?? null } : {}),
    ...(setup.env !== undefined ? { env: setup.env } : {}),
    ...(clock ? { clock: { at: at.date.toISOString(), env: clock } } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.tmpRoot ? { tmpRoot: options.tmpRoot } : {}),
    ...(options.toolchainCache ? { toolchainCache: options.toolchainCache } : {}),
    base: { git: { dir, gitDir: at.gitDir }, commit: at.commit },
    ...(cache ? { environments: { cache, workspace: 'eval', repository: instance.repo } } : {}),
    ...(options.logsDir ? { logFile: join(options.logsDir, `${instance.instance_id.replaceAll('/', '_')}.log`) } : {}),
  });
}

/** The pipeline's run against the gold patch's files and the judge's verdict. */
function measured(instance: Instance, outcome: PipelineOutcome, verdict: Verdict | undefined): PipelineResult {
  const gold = goldFiles(instance.patch);
  const judged = verdict?.setup.ok === true;
  return {
    ...outcome,
    gold_files: gold,
    gold_located: gold.some((f) => outcome.located.includes(f)),
    agrees: judged && typeof outcome.validator === 'boolean' ? outcome.validator === verdict.resolved : null,
  };
}
