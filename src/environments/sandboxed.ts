import { SANDBOX_WORKDIR } from '../sandbox/bwrap-args.js';
import type { Sandbox, SandboxResult } from '../sandbox/types.js';
import { type RunTree, TREE_HOME, TREE_REPO } from './copies.js';
import type { ToolchainEnv } from './environment.js';
import { setupOutputLog } from './setup-output.js';
import { VENV, shellQuote } from './python-setup.js';

export interface TestRunTimeouts {
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
 * The limits of a validation: the whole run and the setup get the sandbox's configured
 * command timeout (EMEND_SANDBOX_TIMEOUT_S), each test the asked timeout (default one
 * minute), never more than the run's.
 */
export function testRunTimeouts(sandbox: Sandbox, asked: Partial<TestRunTimeouts> = {}): TestRunTimeouts {
  const commandMs = sandbox.report().limits.timeoutMs;
  const runTimeoutMs = asked.runTimeoutMs ?? commandMs;
  return {
    runTimeoutMs,
    setupTimeoutMs: asked.setupTimeoutMs ?? commandMs,
    testTimeoutMs: Math.min(asked.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS, runTimeoutMs),
  };
}

/** Where the checkout and HOME sit inside the sandbox. */
export const SANDBOX_REPO = `${SANDBOX_WORKDIR}/${TREE_REPO}`;
const SANDBOX_HOME = `${SANDBOX_WORKDIR}/${TREE_HOME}`;

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
 * The sandbox's browser for the test phase, under each name a browser test runner reads: Karma's
 * Chrome launchers (CHROME_BIN), chrome-launcher, which WebdriverIO and Lighthouse use to find a
 * local Chrome (CHROME_PATH), Puppeteer (PUPPETEER_EXECUTABLE_PATH). Playwright reads no variable
 * for it (only a launch option); PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH is the name configurations
 * that pass one commonly read (docs/environments.md). Empty without a browser.
 */
export function browserEnv(browser: string | undefined): Record<string, string> {
  if (browser === undefined) return {};
  return {
    CHROME_BIN: browser,
    CHROME_PATH: browser,
    PUPPETEER_EXECUTABLE_PATH: browser,
    PLAYWRIGHT_CHROMIUM_EXECUTABLE_PATH: browser,
  };
}

/**
 * Output and stderr as one stream, in order, and on PATH: the toolchains fetched for the
 * repository, then its virtualenv (so `python3 -m pytest` is the venv's python, with what
 * the setup installed), then the user site's scripts. With `progress`, the sandbox's stderr
 * pipe stays open as descriptor `progressFd` first: the progress plugin writes there, apart
 * from the test output.
 */
const shell = (command: string, progressFd: number | undefined, toolchains: string[] = []) => [
  'sh',
  '-c',
  `${progressFd !== undefined ? `exec ${progressFd}>&2; ` : ''}exec 2>&1; ${pathAssignment(toolchains)}; ${command}`,
];

/** The shell assignment putting the toolchains, the virtualenv and the user site's scripts first on PATH. */
const pathAssignment = (toolchains: string[]) =>
  `PATH=${toolchains.map((dir) => `${shellQuote(dir)}:`).join('')}"${VENV}/bin:$HOME/.local/bin:$PATH"`;

/**
 * Where a command of the test phase runs, for a caller that builds its own script (the agent
 * fixer's bash, src/environments/work-tree.ts): the environment, the PATH assignment to run first,
 * the toolchains to bind and the checkout's path inside the sandbox.
 */
export function testPhase(ctx: RunContext): {
  env: Record<string, string>;
  pathAssignment: string;
  toolRoots: string[];
  repo: string;
} {
  return {
    env: { ...ENV, HOME: SANDBOX_HOME, GOPROXY: 'off', ...browserEnv(ctx.sandbox.report().browser), ...ctx.testEnv },
    pathAssignment: pathAssignment(ctx.toolchains?.path ?? []),
    toolRoots: ctx.toolchains?.roots ?? [],
    repo: SANDBOX_REPO,
  };
}

export interface RunContext {
  sandbox: Sandbox;
  limits: TestRunTimeouts;
  signal?: AbortSignal;
  /** Toolchains fetched for the repository (src/environments/environment.ts), in every command. */
  toolchains?: ToolchainEnv;
  /** Variables for the setup phase only (an operator's package index: PIP_INDEX_URL, npm_config_registry). */
  setupEnv?: Record<string, string>;
  /** The account's variables for the repository, in the test phase (the setup phase has them in setupEnv). */
  testEnv?: Record<string, string>;
  /**
   * Values of setupEnv that are secrets: redacted from the setup's report, and no file holding one
   * is left in the tree after setup (src/environments/secret-scrub.ts).
   */
  setupSecrets?: string[];
  /** Receives the setup's output as it comes (src/environments/setup-output.ts: redacted, throttled log records). */
  setupOutput?: { push(chunk: Buffer): void; flush(): void };
}

/** What a run context is made from: the caller's abort, the workspace's and the operator's variables, the log. */
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

/** The context of a validation's runs, or of a work tree's (src/environments/work-tree.ts). */
export function runContextOf(sandbox: Sandbox, limits: TestRunTimeouts, options: RunContextOptions): RunContext {
  const ctx: RunContext = { sandbox, limits, signal: options.signal };
  // The account's variables in both phases; the operator's setup variables and the workspace's
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

/**
 * A watched command (the test phase's pytest run, src/test-runs/run.ts): its progress stream,
 * written to descriptor `fd`, goes to `watch`, which stops the command through `stop` when a
 * test hangs.
 */
export interface Watched {
  watch: { push(chunk: Buffer): void; stop(): void; readonly hung: string | undefined };
  stop: AbortController;
  /** The descriptor the progress is written to, kept open as the sandbox's stderr pipe. */
  fd: number;
  /** The variables the progress plugin needs; its PYTHONPATH goes before one the caller gave. */
  env: Readonly<Record<string, string>>;
  /** Bound read-only: the plugin's directory. */
  readOnlyPaths: string[];
}

/** One command in the sandbox, in a tree, as the validator runs the repository's. */
export interface SandboxedCommand {
  command: string;
  timeoutMs: number;
  network: boolean;
  outputBytes: number;
  /** Added to the environment of every repository command (ENV). */
  env?: Record<string, string>;
  watched?: Watched;
  /** Paths of the workdir bound read-only (a helper the test phase loads: src/test-runs/jasmine-reporter.ts). */
  readOnlyPaths?: string[];
  /** Receives the output as it comes (stdout and stderr are one stream); not with `watched`. */
  onOutput?: (chunk: Buffer) => void;
}

/** Runs a command in the tree; the caller's abort (not a watch's stop) throws ValidationAborted. */
export async function sandboxed(ctx: RunContext, tree: RunTree, run: SandboxedCommand): Promise<SandboxResult> {
  const { command, timeoutMs, network, outputBytes, watched, onOutput } = run;
  const readOnly = [...new Set([...(watched?.readOnlyPaths ?? []), ...(run.readOnlyPaths ?? [])])];
  if (ctx.signal?.aborted) throw new ValidationAborted();
  // The watch's stop and the caller's abort both end the command; only the caller's is an abort.
  const onAbort = () => watched?.stop.abort();
  if (watched) ctx.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const result = await ctx.sandbox.run({
      command: shell(command, watched?.fd, ctx.toolchains?.path),
      ...(ctx.toolchains?.roots.length ? { toolRoots: ctx.toolchains.roots } : {}),
      workdir: tree.workdir,
      cwd: TREE_REPO,
      // The browser's variables in the commands without the network (the tests and their probe):
      // what setup's installers read is the setup environment's (they skip their downloads there).
      env: withProgressEnv(
        { ...ENV, HOME: SANDBOX_HOME, ...(network ? {} : browserEnv(ctx.sandbox.report().browser)), ...run.env },
        watched,
      ),
      network,
      signal: watched ? watched.stop.signal : ctx.signal,
      limits: { timeoutMs, outputBytes },
      ...(readOnly.length > 0 ? { readOnlyPaths: readOnly } : {}),
      ...(watched
        ? {
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
function withProgressEnv(env: Record<string, string>, watched: Watched | undefined): Record<string, string> {
  if (!watched) return env;
  const path = [watched.env.PYTHONPATH, env.PYTHONPATH].filter(Boolean).join(':');
  return { ...env, ...watched.env, ...(path ? { PYTHONPATH: path } : {}) };
}

/** The end of a command's output: its last lines, at most `chars`. */
export const tail = (text: string, lines = 60, chars = 4000) => {
  const cut = text.split('\n').slice(-lines).join('\n');
  return cut.length > chars ? cut.slice(-chars) : cut;
};

/**
 * Strips the places the checkout lived at (the sandbox's /workspace, the host's temporary
 * copy), so ids and markers from the baseline and the change compare equal.
 */
export function normalizeOutput(output: string, roots: string[]): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the terminal colour codes removed here.
  let text = output.replace(/\r\n?/g, '\n').replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  for (const root of roots) text = text.split(`${root.replace(/\/+$/, '')}/`).join('');
  return text;
}
