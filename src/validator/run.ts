import type { Sandbox, SandboxResult } from '../sandbox/types.js';
import { type RunOutcome, judgeRun } from './compare.js';
import { type RunTree, TREE_HOME, TREE_REPO } from './copies.js';
import { type Probe, type TestPlan, probeCommand, readProbe } from './detect.js';
import { normalizeOutput, parseOutput } from './parse.js';

export interface RunLimits {
  /** Per test, where the runner takes a per-test timeout. */
  testTimeoutMs: number;
  /** The whole test command. */
  runTimeoutMs: number;
  /** The dependency install. */
  setupTimeoutMs: number;
}

/** Per test, unless the run's own limit is shorter. */
export const DEFAULT_TEST_TIMEOUT_MS = 120_000;

/**
 * The limits of a validation: the whole run and the setup get the sandbox's configured
 * command timeout (EMEND_SANDBOX_TIMEOUT_S), each test two minutes at most.
 */
export function defaultLimits(sandbox: Sandbox, asked: Partial<RunLimits> = {}): RunLimits {
  const commandMs = sandbox.report().limits.timeoutMs;
  const runTimeoutMs = asked.runTimeoutMs ?? commandMs;
  return {
    runTimeoutMs,
    setupTimeoutMs: asked.setupTimeoutMs ?? commandMs,
    testTimeoutMs: asked.testTimeoutMs ?? Math.min(DEFAULT_TEST_TIMEOUT_MS, runTimeoutMs),
  };
}

/** Where the checkout and HOME sit inside the sandbox. */
const SANDBOX_REPO = `/workspace/${TREE_REPO}`;
const SANDBOX_HOME = `/workspace/${TREE_HOME}`;

/** Kept per run for parsing: the whole report of a big suite, but not without end. */
const TEST_OUTPUT_BYTES = 8 * 1024 * 1024;

/**
 * The environment of every repository command: no colours or progress bars, unbuffered
 * Python (a hang still shows what ran before it), npm quiet about funding and updates,
 * pip allowed to install into the user site (HOME persists from setup to tests, see RunTree).
 */
const ENV: Record<string, string> = {
  CI: 'true',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
  TERM: 'dumb',
  PYTHONUNBUFFERED: '1',
  PYTHONDONTWRITEBYTECODE: '1',
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
  PIP_BREAK_SYSTEM_PACKAGES: '1',
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  GOTOOLCHAIN: 'local',
};

/** Output and stderr as one stream, in order, and the user site's scripts on PATH. */
const shell = (command: string) => ['sh', '-c', `exec 2>&1; PATH="$HOME/.local/bin:$PATH"; ${command}`];

export interface RunContext {
  sandbox: Sandbox;
  limits: RunLimits;
  signal?: AbortSignal;
}

export class ValidationAborted extends Error {
  constructor() {
    super('validation aborted');
    this.name = 'ValidationAborted';
  }
}

async function sandboxed(ctx: RunContext, tree: RunTree, command: string, timeoutMs: number, network: boolean, outputBytes: number, extraEnv: Record<string, string> = {}): Promise<SandboxResult> {
  if (ctx.signal?.aborted) throw new ValidationAborted();
  const result = await ctx.sandbox.run({
    command: shell(command),
    workdir: tree.workdir,
    cwd: TREE_REPO,
    env: { ...ENV, HOME: SANDBOX_HOME, ...extraEnv },
    network,
    signal: ctx.signal,
    limits: { timeoutMs, outputBytes },
  });
  if (result.aborted || ctx.signal?.aborted) throw new ValidationAborted();
  return result;
}

const tail = (text: string, lines = 60, chars = 4000) => {
  const cut = text.split('\n').slice(-lines).join('\n');
  return cut.length > chars ? cut.slice(-chars) : cut;
};

/** What the setup phase did, as the step output shows it. */
export interface SetupReport {
  command: string;
  network: boolean;
  exit_code: number | null;
  duration_ms: number;
  /** Why it did not run, when it did not. */
  skipped?: string;
  timed_out?: boolean;
  /** The end of its output when it failed. */
  log_tail?: string;
}

/**
 * Installs dependencies when the plan says so: with network when the sandbox allows it for
 * setup, else the offline form of the install if there is one, else nothing (and says why).
 */
export async function runSetup(ctx: RunContext, tree: RunTree, plan: TestPlan): Promise<SetupReport | null> {
  if (!plan.setup) return null;
  const network = ctx.sandbox.report().networkForSetup;
  const command = network ? plan.setup.command : plan.setup.offlineCommand;
  if (command === undefined) {
    return { command: plan.setup.command, network: false, exit_code: null, duration_ms: 0, skipped: 'the sandbox allows no network for setup and this install has no offline form' };
  }
  const result = await sandboxed(ctx, tree, command, ctx.limits.setupTimeoutMs, network, 1024 * 1024);
  const report: SetupReport = { command, network, exit_code: result.exitCode, duration_ms: Math.round(result.durationMs) };
  if (result.exitCode !== 0) report.log_tail = tail(normalizeOutput(result.stdout + result.stderr, [SANDBOX_REPO, tree.repo]), 30, 2000);
  if (result.timedOut) report.timed_out = true;
  return report;
}

export type SetupState = 'none' | 'ok' | 'skipped' | 'failed';

export function setupState(setup: SetupReport | null): SetupState {
  if (!setup) return 'none';
  if (setup.skipped !== undefined) return 'skipped';
  return setup.exit_code === 0 ? 'ok' : 'failed';
}

/** The setup as a run-level failure, when it failed. */
export function setupFailure(setup: SetupReport | null): string | undefined {
  if (!setup || setup.skipped !== undefined || setup.exit_code === 0) return undefined;
  if (setup.timed_out) return `(setup) ${setup.command} timed out`;
  return `(setup) ${setup.command} ${setup.exit_code === null ? 'was killed' : `exited with code ${setup.exit_code}`}`;
}

/** Asks the sandbox what the timeout flags depend on (node's version, the pytest-timeout plugin). */
export async function probe(ctx: RunContext, tree: RunTree, plan: TestPlan): Promise<Probe> {
  const command = probeCommand(plan);
  if (command === undefined) return {};
  const result = await sandboxed(ctx, tree, command, 30_000, false, 64 * 1024);
  return readProbe(result.stdout);
}

export interface TestRun {
  outcome: RunOutcome;
  exitCode: number | null;
  timedOut: boolean;
  durationMs: number;
  /** The end of the output, paths made relative to the checkout. */
  logTail: string;
}

/** Runs the test command once, offline, and judges it from its exit and its output. */
export async function runTests(ctx: RunContext, tree: RunTree, command: string, setup: SetupReport | null): Promise<TestRun> {
  const result = await sandboxed(ctx, tree, command, ctx.limits.runTimeoutMs, false, TEST_OUTPUT_BYTES, { GOPROXY: 'off' });
  const output = normalizeOutput(result.stdout + result.stderr, [SANDBOX_REPO, tree.repo]);
  const outcome = judgeRun(
    parseOutput(output),
    { exitCode: result.exitCode, signal: result.signal, timedOut: result.timedOut, timeoutMs: ctx.limits.runTimeoutMs },
    setupFailure(setup),
  );
  return { outcome, exitCode: result.exitCode, timedOut: result.timedOut, durationMs: Math.round(result.durationMs), logTail: tail(output) };
}
