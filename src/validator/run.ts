import type { Sandbox, SandboxResult } from '../sandbox/types.js';
import type { HungTest, SetupReport, SetupState } from '../step-contract/fix.js';
import { type RunOutcome, judgeRun } from './compare.js';
import { type RunTree, TREE_HOME, TREE_REPO } from './copies.js';
import { type Probe, type TestPlan, probeCommand, readProbe } from './detect.js';
import type { ToolchainEnv } from './environment.js';
import { removeFilesHoldingSecrets } from './secret-scrub.js';
import { redact, setupOutputLog } from './setup-output.js';
import { normalizeOutput, parseOutput } from './parse.js';
import { ProgressWatch, withoutProgress } from './progress-watch.js';
import { PROGRESS_ENV, PROGRESS_FD, TREE_TOOLS, installProgressPlugin } from './pytest-progress.js';
import { VENV, shellQuote } from './python-setup.js';

export interface RunLimits {
  /** Per test, where the runner takes a per-test timeout or the validator watches the run (pytest). */
  testTimeoutMs: number;
  /** The whole test command. */
  runTimeoutMs: number;
  /** The dependency install. */
  setupTimeoutMs: number;
}

/** Per test, when the caller does not say (the service passes EMEND_VALIDATOR_TEST_TIMEOUT_S). */
export const DEFAULT_TEST_TIMEOUT_MS = 60_000;

/**
 * How long after its per-test timeout a watched pytest test is stopped: long enough for
 * faulthandler's stack dump at the timeout (and pytest-timeout's own stop, where installed)
 * to come out first, so the output shows where the test was stuck.
 */
export const HANG_GRACE_MS = 1_000;

/**
 * The limits of a validation: the whole run and the setup get the sandbox's configured
 * command timeout (EMEND_SANDBOX_TIMEOUT_S), each test the asked timeout (default one
 * minute), never more than the run's.
 */
export function defaultLimits(sandbox: Sandbox, asked: Partial<RunLimits> = {}): RunLimits {
  const commandMs = sandbox.report().limits.timeoutMs;
  const runTimeoutMs = asked.runTimeoutMs ?? commandMs;
  return {
    runTimeoutMs,
    setupTimeoutMs: asked.setupTimeoutMs ?? commandMs,
    testTimeoutMs: Math.min(asked.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS, runTimeoutMs),
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

/**
 * Output and stderr as one stream, in order, and on PATH: the toolchains fetched for the
 * repository, then its virtualenv (so `python3 -m pytest` is the venv's python, with what
 * the setup installed), then the user site's scripts. With `progress`, the sandbox's stderr
 * pipe stays open as descriptor PROGRESS_FD first: the progress plugin writes there, apart
 * from the test output.
 */
const shell = (command: string, progress = false, toolchains: string[] = []) => [
  'sh',
  '-c',
  `${progress ? `exec ${PROGRESS_FD}>&2; ` : ''}exec 2>&1; ${pathAssignment(toolchains)}; ${command}`,
];

/** The shell assignment putting the toolchains, the virtualenv and the user site's scripts first on PATH. */
const pathAssignment = (toolchains: string[]) =>
  `PATH=${toolchains.map((dir) => `${shellQuote(dir)}:`).join('')}"${VENV}/bin:$HOME/.local/bin:$PATH"`;

/**
 * Where a command of the test phase runs, for a caller that builds its own script (the agent
 * fixer's bash, src/validator/work-tree.ts): the environment, the PATH assignment to run first,
 * the toolchains to bind and the checkout's path inside the sandbox.
 */
export function testPhase(ctx: RunContext): {
  env: Record<string, string>;
  pathAssignment: string;
  toolRoots: string[];
  repo: string;
} {
  return {
    env: { ...ENV, HOME: SANDBOX_HOME, GOPROXY: 'off', ...ctx.testEnv },
    pathAssignment: pathAssignment(ctx.toolchains?.path ?? []),
    toolRoots: ctx.toolchains?.roots ?? [],
    repo: SANDBOX_REPO,
  };
}

export interface RunContext {
  sandbox: Sandbox;
  limits: RunLimits;
  signal?: AbortSignal;
  /** Toolchains fetched for the repository (src/validator/environment.ts), in every command. */
  toolchains?: ToolchainEnv;
  /** Variables for the setup phase only (an operator's package index: PIP_INDEX_URL, npm_config_registry). */
  setupEnv?: Record<string, string>;
  /** The account's variables for the repository, in the test phase (the setup phase has them in setupEnv). */
  testEnv?: Record<string, string>;
  /**
   * Values of setupEnv that are secrets: redacted from the setup's report, and no file holding one
   * is left in the tree after setup (src/validator/secret-scrub.ts).
   */
  setupSecrets?: string[];
  /** Receives the setup's output as it comes (src/validator/setup-output.ts: redacted, throttled log records). */
  setupOutput?: { push(chunk: Buffer): void; flush(): void };
}

/** What a run context is made from: the caller's abort, the account's and the operator's variables, the log. */
export interface RunContextOptions {
  signal?: AbortSignal;
  /** The account's variables for the repository: both phases. */
  env?: Record<string, string>;
  /** The operator's setup variables: the setup phase only. */
  setupEnv?: Record<string, string>;
  /** The account's setup-only secrets: the setup phase only, redacted from its output. */
  setupSecrets?: Record<string, string>;
  /** Receives the setup's output as it runs (`setup output` records), without the setup-only values. */
  log?: (message: string, data?: Record<string, unknown>) => void;
}

/** The context of a validation's runs, or of a work tree's (src/validator/work-tree.ts). */
export function runContextOf(sandbox: Sandbox, limits: RunLimits, options: RunContextOptions): RunContext {
  const ctx: RunContext = { sandbox, limits, signal: options.signal };
  // The account's variables in both phases; the operator's setup variables and the account's
  // secrets in the setup phase only (the secrets last: a name set twice is the secret).
  const setupEnv = { ...options.env, ...options.setupEnv, ...options.setupSecrets };
  if (Object.keys(setupEnv).length > 0) ctx.setupEnv = setupEnv;
  if (options.env && Object.keys(options.env).length > 0) ctx.testEnv = options.env;
  const secrets = [...Object.values(options.setupEnv ?? {}), ...Object.values(options.setupSecrets ?? {})];
  if (options.setupSecrets && Object.keys(options.setupSecrets).length > 0)
    ctx.setupSecrets = Object.values(options.setupSecrets);
  // The setup's output, as it runs, in the log (a task's SSE stream), without the setup-only values.
  if (options.log) ctx.setupOutput = setupOutputLog(options.log, { secrets });
  return ctx;
}

export class ValidationAborted extends Error {
  constructor() {
    super('validation aborted');
    this.name = 'ValidationAborted';
  }
}

/** A watched test command: its progress stream goes to `watch`, which stops it through `stop`. */
interface Watched {
  watch: ProgressWatch;
  stop: AbortController;
}

async function sandboxed(
  ctx: RunContext,
  tree: RunTree,
  command: string,
  timeoutMs: number,
  network: boolean,
  outputBytes: number,
  extraEnv: Record<string, string> = {},
  watched?: Watched,
  onOutput?: (chunk: Buffer) => void,
): Promise<SandboxResult> {
  if (ctx.signal?.aborted) throw new ValidationAborted();
  // The watch's stop and the caller's abort both end the command; only the caller's is an abort.
  const onAbort = () => watched?.stop.abort();
  if (watched) ctx.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await ctx.sandbox.run({
      command: shell(command, watched !== undefined, ctx.toolchains?.path),
      ...(ctx.toolchains?.roots.length ? { toolRoots: ctx.toolchains.roots } : {}),
      workdir: tree.workdir,
      cwd: TREE_REPO,
      env: withProgressEnv({ ...ENV, HOME: SANDBOX_HOME, ...extraEnv }, watched !== undefined),
      network,
      signal: watched ? watched.stop.signal : ctx.signal,
      limits: { timeoutMs, outputBytes },
      ...(watched
        ? {
            readOnlyPaths: [TREE_TOOLS],
            onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => {
              if (stream === 'stderr') watched.watch.push(chunk);
            },
          }
        : onOutput
          ? { onOutput: (_stream: 'stdout' | 'stderr', chunk: Buffer) => onOutput(chunk) }
          : {}),
    });
    if (ctx.signal?.aborted || (result.aborted && watched?.watch.hung === undefined)) throw new ValidationAborted();
    return result;
  } finally {
    watched?.watch.stop();
    ctx.signal?.removeEventListener('abort', onAbort);
  }
}

/** The progress plugin's variables added; its PYTHONPATH goes before one the caller gave, not instead of it. */
function withProgressEnv(env: Record<string, string>, watched: boolean): Record<string, string> {
  if (!watched) return env;
  const path = [PROGRESS_ENV.PYTHONPATH, env.PYTHONPATH].filter(Boolean).join(':');
  return { ...env, ...PROGRESS_ENV, ...(path ? { PYTHONPATH: path } : {}) };
}

const tail = (text: string, lines = 60, chars = 4000) => {
  const cut = text.split('\n').slice(-lines).join('\n');
  return cut.length > chars ? cut.slice(-chars) : cut;
};

/**
 * Installs dependencies when the plan says so: with network when the sandbox allows it for
 * setup, else the offline form of the install if there is one, else nothing (and says why).
 */
export async function runSetup(ctx: RunContext, tree: RunTree, plan: TestPlan): Promise<SetupReport | null> {
  const extra = plan.extraSetup ?? [];
  if (!plan.setup && extra.length === 0) return null;
  const network = ctx.sandbox.report().networkForSetup;
  const install = plan.setup && (network ? plan.setup.command : plan.setup.offlineCommand);
  if (plan.setup && install === undefined && extra.length === 0) {
    return {
      command: plan.setup.command,
      network: false,
      exit_code: null,
      duration_ms: 0,
      skipped: 'the sandbox allows no network for setup and this install has no offline form',
    };
  }
  // The repository's `.emend/setup` and the account's setup setting follow the install, in one
  // command: a failure anywhere is the setup's failure, reported with its output.
  const commandOf = (first: string | null | undefined) =>
    [first, ...extra].filter((c): c is string => c !== undefined && c !== null).join(' && ');
  let command = commandOf(install);
  const output = ctx.setupOutput;
  const run = (line: string) =>
    sandboxed(
      ctx,
      tree,
      line,
      ctx.limits.setupTimeoutMs,
      network,
      1024 * 1024,
      ctx.setupEnv,
      undefined,
      output ? (chunk) => output.push(chunk) : undefined,
    ).finally(() => output?.flush());
  let result = await run(command);
  let durationMs = result.durationMs;
  // npm: a failure the install's own words explain is retried as they say, at most once per
  // cause (docs/environments.md).
  let next = install?.startsWith('npm ') ? retriedInstall(install, result) : undefined;
  while (next) {
    output?.push(Buffer.from(`emend: ${next.why}; installing again with: ${next.install}\n`));
    command = commandOf(next.install);
    result = await run(command);
    durationMs += result.durationMs;
    next = retriedInstall(next.install, result);
  }
  const report: SetupReport = {
    command,
    network,
    exit_code: result.exitCode,
    duration_ms: Math.round(durationMs),
  };
  if (result.exitCode !== 0)
    report.log_tail = redact(
      tail(normalizeOutput(result.stdout + result.stderr, [SANDBOX_REPO, tree.repo]), 30, 2000),
      ctx.setupSecrets ?? [],
    );
  const scrubbed = await removeFilesHoldingSecrets(tree.workdir, ctx.setupSecrets ?? []);
  if (output && scrubbed.holding.length > 0)
    output.push(
      Buffer.from(
        `emend: removed ${scrubbed.holding.length} file(s) holding a setup secret: ${scrubbed.holding.join(', ')}\n`,
      ),
    );
  if (output && scrubbed.unreadable.length > 0)
    output.push(
      Buffer.from(
        `emend: removed ${scrubbed.unreadable.length} file(s) or folder(s) the setup left unreadable, which could not be checked for a setup secret: ${scrubbed.unreadable.join(', ')}\n`,
      ),
    );
  output?.flush();
  if (result.timedOut) report.timed_out = true;
  if (result.egress) report.connections = result.egress;
  return report;
}

/**
 * The npm install to try after a failed one, when npm's own words say what to change:
 * - ENOVERSIONS or ETARGET under `--before`: no version published before the base commit's date
 *   (a registry mirror whose publish dates are its own has nothing older than its first copy),
 *   so without `--before`: the newest versions the manifest's ranges allow;
 * - ERESOLVE: a peer dependency conflict npm 7+ refuses and npm 6, which an old repository was
 *   written against, allowed: with `--legacy-peer-deps`, npm 6's resolution;
 * - `npm ci` refusing a lockfile out of step with package.json (a change that edited one and not
 *   the other): `npm install`, which brings the lockfile up to date, as npm itself advises.
 */
function retriedInstall(
  install: string,
  result: { exitCode: number | null; stdout: string; stderr: string },
): { install: string; why: string } | undefined {
  if (result.exitCode === 0) return undefined;
  const said = result.stdout + result.stderr;
  if (/ --before=\S+/.test(install) && /\b(ENOVERSIONS|ETARGET)\b/.test(said))
    return {
      install: install.replace(/ --before=\S+/, ''),
      why: "no version published before the base commit's date",
    };
  if (install.startsWith('npm ci ') && /`npm ci` can only install packages when your package\.json and/.test(said))
    return {
      install: install.replace(/^npm ci /, 'npm install '),
      why: 'npm ci refused a lockfile out of step with package.json',
    };
  if (install.startsWith('npm install ') && !install.includes('--legacy-peer-deps') && /\bERESOLVE\b/.test(said))
    return { install: `${install} --legacy-peer-deps`, why: 'npm refused a peer dependency conflict (ERESOLVE)' };
  return undefined;
}

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
  /** The whole output (up to the validator's cap), paths made relative to the checkout: the eval's judge reads ids from it. */
  output: string;
  hung?: HungTest;
}

export interface TestOptions {
  /**
   * Watch the run's progress through the pytest plugin and stop it when one test runs past
   * the per-test timeout (plus HANG_GRACE_MS); the command must load the plugin (-p).
   */
  watchPytest?: boolean;
  /** Variables for the test command (the eval harness's per-repository environment, e.g. PYTHONPATH). */
  env?: Record<string, string>;
}

/** Runs the test command once, offline, and judges it from its exit and its output. */
export async function runTests(
  ctx: RunContext,
  tree: RunTree,
  command: string,
  setup: SetupReport | null,
  options: TestOptions = {},
): Promise<TestRun> {
  let watched: Watched | undefined;
  if (options.watchPytest) {
    await installProgressPlugin(tree);
    const stop = new AbortController();
    watched = {
      stop,
      watch: new ProgressWatch({ limitMs: ctx.limits.testTimeoutMs + HANG_GRACE_MS, onHang: () => stop.abort() }),
    };
  }
  const watch = watched?.watch;
  const result = await sandboxed(
    ctx,
    tree,
    command,
    ctx.limits.runTimeoutMs,
    false,
    TEST_OUTPUT_BYTES,
    { GOPROXY: 'off', ...ctx.testEnv, ...options.env },
    watched,
  );
  let output = normalizeOutput(result.stdout + withoutProgress(result.stderr), [SANDBOX_REPO, tree.repo]);
  const hungId = watch?.hung;
  const outcome = judgeRun(
    parseOutput(output),
    {
      exitCode: result.exitCode,
      signal: result.signal,
      timedOut: result.timedOut,
      timeoutMs: ctx.limits.runTimeoutMs,
      ...(hungId !== undefined ? { hung: hungId } : {}),
    },
    setupFailure(setup),
  );
  let hung: HungTest | undefined;
  if (hungId !== undefined) {
    hung = {
      id: hungId,
      reason: `timed out after ${Math.round(ctx.limits.testTimeoutMs / 1000)} s (killed)`,
      not_run: watch?.notRun ?? null,
    };
    // Said at the end of the output too, where the fixer reads the log.
    output = `${output.replace(/\n*$/, '')}\nemend: ${describeHung(hung)}\n`;
  }
  return {
    outcome,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    durationMs: Math.round(result.durationMs),
    logTail: tail(output),
    output,
    ...(hung ? { hung } : {}),
  };
}

/** A stopped run in words: the test, why, and what it kept from running. */
export function describeHung(hung: HungTest): string {
  const after =
    hung.not_run === null ? 'the tests after it did not run' : `${hung.not_run} test(s) after it did not run`;
  return `${hung.id} ${hung.reason}; ${after}`;
}
