import { lstatSync, mkdtempSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import type { LookupFunction } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import { setupAllow } from '../config/outbound.js';
import type { SandboxConfig } from '../config/sandbox.js';
import {
  GROUP,
  HOSTS,
  PASSWD,
  SANDBOX_BROWSER,
  SANDBOX_WORKDIR,
  browserWrapper,
  bwrapArgs,
  readOnlyPath,
  sandboxCwd,
  sandboxEnv,
} from './bwrap-args.js';
import { bwrapVersion, findExecutable, hostLayout, isExecutable } from './bwrap.js';
import { type CgroupSupport, CommandCgroup, detectCgroups } from './cgroups.js';
import { type SandboxFeature, describeDenied, findDenied, runBwrap } from './denials.js';
import {
  EGRESS_DIR,
  EGRESS_NODE,
  EGRESS_RELAY,
  EGRESS_SOCKET,
  RELAY_PORT,
  RELAY_SOURCE,
  egressEnv,
  mirrorDestinations,
  mirrorEnv,
  trustEnv,
  toolSettings,
} from './egress-env.js';
import { EgressProxy, type EgressSession } from './egress-proxy.js';
import { launch } from './launch.js';
import { prlimitArgs, resolveLimits } from './limits.js';
import type { Sandbox, SandboxReport, SandboxRequest, SandboxResult } from './types.js';

/** Repository commands cannot run: bubblewrap is missing or does not work on this host. */
export class SandboxUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SandboxUnavailableError';
  }
}

export interface SandboxOptions {
  /** The bwrap binary; found on PATH by default. */
  bwrapPath?: string;
  /** The prlimit binary (util-linux); found on PATH by default. */
  prlimitPath?: string;
  /** false: leave cgroups alone even where the host offers them. */
  cgroups?: boolean;
  /** Host paths a work directory must not be, nor contain (the data dir). */
  protectedPaths?: string[];
  /** The resolver behind the setup proxy's policy (tests show a name that resolves to loopback). */
  lookup?: LookupFunction;
  /**
   * The host's Chromium, for repositories whose tests run in a browser (EMEND_CHROMIUM_PATH;
   * /usr/bin/chromium by default). Where it is no executable the sandbox has no browser.
   */
  browserPath?: string;
}

/** Debian's chromium package. */
export const DEFAULT_BROWSER_PATH = '/usr/bin/chromium';

/**
 * The host's Chromium as the sandbox can start it: its real path, and the directory to bind
 * read-only when it is not under /usr (bound already). Undefined when there is none.
 */
function hostBrowser(path: string): { chromium: string; root?: string } | undefined {
  if (!isExecutable(path)) return undefined;
  const chromium = realpathSync(path);
  return chromium.startsWith('/usr/') ? { chromium } : { chromium, root: dirname(chromium) };
}

/** A setup command's egress: its own socket to the proxy, in a private directory bound at EGRESS_DIR. */
interface Egress {
  dir: string;
  session: EgressSession;
}

async function openEgress(proxy: EgressProxy): Promise<Egress> {
  const dir = mkdtempSync(resolve(tmpdir(), 'emend-egress-'));
  try {
    writeFileSync(join(dir, 'relay.cjs'), RELAY_SOURCE, { mode: 0o444 });
    return { dir, session: await proxy.open(dir) };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** The command wrapped in the relay, which gives it 127.0.0.1:RELAY_PORT to the proxy. */
const relayed = (command: string[]) => [
  EGRESS_NODE,
  EGRESS_RELAY,
  EGRESS_SOCKET,
  String(RELAY_PORT),
  JSON.stringify(toolSettings()),
  '--',
  ...command,
];

const HOW_TO_FIX = 'install it (apt-get install bubblewrap), or, for development only, set EMEND_SANDBOX=unsafe-host';

/** The host environment of the processes that start bwrap: nothing of the service's. */
const LAUNCH_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

function checkWorkdir(workdir: string, protectedPaths: string[]): string {
  const dir = resolve(workdir);
  let isDir = false;
  try {
    isDir = statSync(dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new RangeError(`the work directory ${dir} is not a directory`);
  for (const path of ['/', ...protectedPaths.map((p) => resolve(p))]) {
    const from = relative(dir, path);
    if (path === '/' ? dir === '/' : from === '' || !from.startsWith('..'))
      throw new RangeError(`the work directory ${dir} would expose ${path}`);
  }
  return dir;
}

/**
 * Each read-only path must be a real directory of the work directory, reached through no symlink:
 * bwrap resolves a bind's source on the host, so a link put there by an earlier command
 * would bind whatever it points at.
 */
function checkReadOnly(workdir: string, paths: string[]): string[] {
  for (const path of paths) {
    let at = workdir;
    for (const part of posix.relative(SANDBOX_WORKDIR, readOnlyPath(path)).split('/')) {
      at = join(at, part);
      if (!lstatSync(at, { throwIfNoEntry: false })?.isDirectory())
        throw new RangeError(`the read-only path ${path} is not a directory of the work directory`);
    }
  }
  return paths;
}

/**
 * Picks the sandbox the configuration asks for and checks, by running a command, that it
 * works on this host. A missing or broken bubblewrap does not stop the service: the sandbox
 * is then `unavailable`, reports why, and refuses every command.
 */
export async function createSandbox(config: SandboxConfig, options: SandboxOptions = {}): Promise<Sandbox> {
  const base: SandboxReport = {
    kind: config.mode,
    cgroups: 'none',
    memoryLimit: false,
    processLimit: false,
    limits: config.limits,
    networkForSetup: config.setupNetwork !== 'off',
    setupNetwork: config.setupNetwork,
    toolRoots: config.toolRoots,
  };
  // The operator's mirrors are reached as if named in EMEND_SETUP_ALLOW with their ports.
  const mirrorRules =
    mirrorDestinations(config).length > 0 ? setupAllow.parse(mirrorDestinations(config).join(',')) : [];
  const proxy =
    config.setupNetwork === 'proxy'
      ? new EgressProxy([...config.setupAllow, ...mirrorRules], options.lookup)
      : undefined;
  const unavailable = (problem: string, denied: SandboxFeature[] = []): Sandbox => {
    const report: SandboxReport = { ...base, kind: 'unavailable', problem, ...(denied.length ? { denied } : {}) };
    return {
      report: () => report,
      run: async () => {
        throw new SandboxUnavailableError(problem);
      },
    };
  };

  let bwrap: string | undefined;
  let version: string | undefined;
  if (config.mode === 'bubblewrap') {
    bwrap = options.bwrapPath ?? findExecutable('bwrap');
    if (bwrap === undefined || !isExecutable(bwrap)) {
      return unavailable(
        `bubblewrap is required to run repository commands, ` +
          `and ${bwrap ? `${bwrap} is not an executable` : 'bwrap is not installed'}: ${HOW_TO_FIX}`,
      );
    }
    version = bwrapVersion(bwrap);
  }
  const bash = findExecutable('bash');
  if (bash === undefined) return unavailable('bash is required to start sandboxed commands: install bash');
  const prlimit = options.prlimitPath ?? findExecutable('prlimit');
  if (config.mode === 'bubblewrap' && (prlimit === undefined || !isExecutable(prlimit))) {
    return unavailable('prlimit (util-linux) is required to set the per-command limits: install util-linux');
  }

  const layout = hostLayout();
  const browser = hostBrowser(options.browserPath ?? DEFAULT_BROWSER_PATH);
  const protectedPaths = options.protectedPaths ?? [];
  const build = (cgroups: CgroupSupport): Sandbox => {
    const report: SandboxReport = {
      ...base,
      ...(version ? { version } : {}),
      cgroups: cgroups.version,
      memoryLimit: cgroups.memory !== undefined,
      processLimit: cgroups.pids !== undefined,
      ...(cgroups.notes.length > 0 ? { notes: cgroups.notes } : {}),
      // unsafe-host starts the host's Chromium as it is (no script, no flags: nothing is nested there).
      ...(browser ? { browser: bwrap ? SANDBOX_BROWSER : browser.chromium } : {}),
    };
    const run = async (request: SandboxRequest): Promise<SandboxResult> => {
      const limits = resolveLimits(config.limits, request.limits);
      const workdir = checkWorkdir(request.workdir, protectedPaths);
      if (request.network && config.setupNetwork === 'off') {
        throw new RangeError(
          'network was asked for, but the operator has turned it off for setup (EMEND_SANDBOX_SETUP_NETWORK=off)',
        );
      }
      if (request.command.length === 0) throw new RangeError('empty command');
      const rlimits = prlimit ? prlimitArgs(prlimit, limits) : [];
      // Through the proxy: no network of its own, the relay and the proxy's socket bound in.
      const egress = bwrap && request.network && proxy ? await openEgress(proxy) : undefined;
      let argv: string[];
      let cwd: string;
      let launchEnv: Record<string, string> = LAUNCH_ENV;
      if (bwrap) {
        const plan = {
          workdir,
          cwd: request.cwd,
          command: egress ? relayed(request.command) : request.command,
          // With the network (through the proxy or the host's), the host's CA bundle is trusted.
          env: {
            ...(egress ? egressEnv() : {}),
            ...(request.network && layout.caBundle ? trustEnv(layout.caBundle) : {}),
            ...(request.network ? mirrorEnv(config) : {}),
            ...request.env,
          },
          network: (request.network ?? false) && config.setupNetwork === 'host',
          // The request's own (a fetched toolchain) after the operator's.
          toolRoots: [...config.toolRoots, ...(browser?.root ? [browser.root] : []), ...(request.toolRoots ?? [])],
          readOnly: checkReadOnly(workdir, request.readOnlyPaths ?? []),
          ...(egress
            ? {
                binds: [
                  { source: egress.dir, dest: EGRESS_DIR },
                  { source: process.execPath, dest: EGRESS_NODE },
                ],
              }
            : {}),
          // The private /tmp lives in memory: no larger than the memory limit.
          tmpBytes: limits.memoryBytes,
          passwdFd: 3,
          groupFd: 4,
          hostsFd: 5,
          ...(browser ? { browserFd: 6 } : {}),
        };
        argv = [...rlimits, bwrap, ...bwrapArgs(plan, layout)];
        cwd = '/';
      } else {
        // unsafe-host: the same limits and the same cleared environment, but on the host itself
        // (and its network: nothing here is isolated, the proxy included).
        cwd = resolve(workdir, relative(SANDBOX_WORKDIR, sandboxCwd(request.cwd)));
        launchEnv = {
          ...sandboxEnv({ ...(request.network ? mirrorEnv(config) : {}), ...request.env }),
          ...(request.env?.HOME ? {} : { HOME: workdir }),
        };
        argv = [...rlimits, ...request.command];
      }
      const cgroup = CommandCgroup.create(cgroups, limits);
      try {
        const result = await launch({
          bash,
          argv,
          cwd,
          env: launchEnv,
          fdData: bwrap ? [PASSWD, GROUP, HOSTS, ...(browser ? [browserWrapper(browser.chromium)] : [])] : [],
          ...(request.stdin !== undefined ? { stdin: request.stdin } : {}),
          timeoutMs: limits.timeoutMs,
          outputBytes: limits.outputBytes,
          ...(request.signal ? { signal: request.signal } : {}),
          ...(request.onOutput ? { onOutput: request.onOutput } : {}),
          ...(cgroup ? { cgroup } : {}),
        });
        return egress ? { ...result, egress: await egress.session.close() } : result;
      } finally {
        cgroup?.remove();
        if (egress) {
          await egress.session.close().catch(() => []);
          rmSync(egress.dir, { recursive: true, force: true });
        }
      }
    };
    return { report: () => report, run };
  };

  const cgroups: CgroupSupport =
    options.cgroups === false ? { version: 'none', notes: ['cgroups turned off'] } : detectCgroups();
  const sandbox = build(cgroups);
  if (config.mode === 'unsafe-host') return sandbox;

  // Start one command the way every command starts, so a host where bubblewrap cannot make
  // its namespaces (user namespaces off, say) says so now rather than at the first task.
  const problem = await probe(sandbox);
  if (problem === undefined) return sandbox;
  if (cgroups.version !== 'none') {
    const without = build({
      version: 'none',
      notes: [...cgroups.notes, `commands cannot join the cgroups: ${problem}`],
    });
    if ((await probe(without)) === undefined) {
      const report: SandboxReport = { ...without.report(), denied: ['cgroups'] };
      return { report: () => report, run: without.run };
    }
  }
  // Which of the sandbox's features the host denies, each tried on its own (a container
  // runtime's masked /proc, user namespaces turned off), named in /health.
  const denied = await findDenied(runBwrap(bwrap!), problem);
  const words = denied.length > 0 ? `${describeDenied(denied)}. ` : '';
  return unavailable(
    `bubblewrap (${bwrap}) cannot start a sandbox on this host: ${problem}. ${words}Repository commands need it: fix ` +
      `the host${denied.length > 0 ? '' : ' (user namespaces must be enabled)'}, or, for development only, set EMEND_SANDBOX=unsafe-host`,
    denied,
  );
}

async function probe(sandbox: Sandbox): Promise<string | undefined> {
  const workdir = mkdtempSync(resolve(tmpdir(), 'emend-sandbox-probe-'));
  try {
    const result = await sandbox.run({ command: ['true'], workdir, limits: { timeoutMs: 10_000 } });
    if (result.exitCode === 0) return undefined;
    return result.stderr.trim() || `exit code ${result.exitCode ?? result.signal}`;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    rmSync(workdir, { recursive: true, force: true });
  }
}
