import type { SetupReport, SetupState } from '../step-contract/fix.js';
import type { RunTree } from './copies.js';
import { failedDependencyScript, rootLifecycle, rootPackageName, takesIgnoreScripts } from './dependency-scripts.js';
import type { TestRecipe } from './detect.js';
import { isYarnClassic, throughSetupRegistry } from './registry-urls.js';
import { type RunContext, SANDBOX_REPO, normalizeOutput, sandboxed, tail } from './sandboxed.js';
import { nativeBuildFailure } from './native-build.js';
import { removeFilesHoldingSecrets } from './secret-scrub.js';
import { setupPhaseEnv } from './setup-env.js';
import { redact } from './setup-output.js';
import { codeHostNeeds, refusedSummary } from './setup-refusals.js';

/**
 * Installs dependencies when the recipe says so: with network when the sandbox allows it for
 * setup, else the offline form of the install if there is one, else nothing (and says why).
 */
export async function runSetup(ctx: RunContext, tree: RunTree, recipe: TestRecipe): Promise<SetupReport | null> {
  const extra = recipe.extraSetup ?? [];
  if (!recipe.setup && extra.length === 0) return null;
  const network = ctx.sandbox.report().networkForSetup;
  const install = recipe.setup && (network ? recipe.setup.command : recipe.setup.offlineCommand);
  if (recipe.setup && install === undefined && extra.length === 0) {
    return {
      command: recipe.setup.command,
      network: false,
      exit_code: null,
      duration_ms: 0,
      skipped: 'the sandbox allows no network for setup and this install has no offline form',
    };
  }
  // The repository's `.emend/setup` and the workspace's setup setting follow the install, in one
  // command: a failure anywhere is the setup's failure, reported with its output.
  const commandOf = (first: string | null | undefined) =>
    [first, ...extra].filter((c): c is string => c !== undefined && c !== null).join(' && ');
  // The install as it runs: yarn 1's lockfile URLs pointed at the setup's registry, and, once a
  // dependency's script has failed, with dependencies' scripts off and the root's own run after.
  let scriptsOff = false;
  // Whether the lockfile was set aside: the retries then start from no node_modules (what a failed
  // attempt extracted is not kept).
  let unlocked = false;
  const installLine = (plain: string | null | undefined) => {
    if (plain === undefined || plain === null) return undefined;
    const pm = scriptsOff ? `${plain} --ignore-scripts` : plain;
    const fetched = network && isYarnClassic(plain) ? throughSetupRegistry(pm) : pm;
    const own = scriptsOff ? rootLifecycle(tree.repo) : undefined;
    return own ? `${fetched} && ${own}` : fetched;
  };
  let command = commandOf(installLine(install));
  const output = ctx.setupOutput;
  const notes: string[] = [];
  const run = (line: string) =>
    sandboxed(ctx, tree, {
      command: line,
      timeoutMs: ctx.limits.setupTimeoutMs,
      network,
      outputBytes: 1024 * 1024,
      // The download skips and git over HTTPS first; the repository's and operator's variables win.
      env: { ...setupPhaseEnv(), ...ctx.setupEnv },
      ...(output ? { onOutput: (chunk: Buffer) => output.push(chunk) } : {}),
    }).finally(() => output?.flush());
  let result = await run(command);
  let durationMs = result.durationMs;
  let connections = result.egress ?? [];
  // A native module that did not build is named (docs/environments.md), also where the install
  // then went through without dependencies' scripts: the module is still missing.
  const nativeOf = (r: typeof result) =>
    nativeBuildFailure(normalizeOutput(r.stdout + r.stderr, [SANDBOX_REPO, tree.repo]));
  let native = nativeOf(result);
  // A failure the install's own words explain is retried as they say, at most once per cause
  // (docs/environments.md): npm's resolution retries, and a dependency's failed install script.
  let plain = install ?? undefined;
  let next = nextInstall(plain, result, scriptsOff, rootPackageName(tree.repo));
  while (next && plain !== undefined) {
    if (next.scriptsOff) {
      scriptsOff = true;
      notes.push(`${next.why}; installed again without dependencies' scripts`);
    } else {
      plain = next.install;
      // The versions tested are then not the lockfile's: said in the verdict.
      if (next.unlocked) notes.push(`${next.why}; installed again with: ${next.install}`);
      unlocked ||= next.unlocked === true;
    }
    const line = `${unlocked ? 'rm -rf node_modules && ' : ''}${installLine(plain)!}`;
    output?.push(Buffer.from(`emend: ${next.why}; installing again with: ${line}\n`));
    command = commandOf(line);
    result = await run(command);
    durationMs += result.durationMs;
    connections = mergeConnections(connections, result.egress ?? []);
    native ??= nativeOf(result);
    next = nextInstall(plain, result, scriptsOff, rootPackageName(tree.repo));
  }
  const report: SetupReport = {
    command,
    network,
    exit_code: result.exitCode,
    duration_ms: Math.round(durationMs),
  };
  if (result.exitCode !== 0) {
    // The tool's last lines, then where it could not go: the proxy's refusals, and the
    // dependencies that needed a code host setup could not reach.
    const unreached = [refusedSummary(connections), ...codeHostNeeds(tree.repo, connections)].filter(
      (n): n is string => n !== undefined,
    );
    for (const n of unreached) output?.push(Buffer.from(`emend: ${n}\n`));
    const said = normalizeOutput(result.stdout + result.stderr, [SANDBOX_REPO, tree.repo]);
    const lastLines = tail(said, 30, 2000);
    report.log_tail = redact([lastLines, ...unreached.map((n) => `emend: ${n}`)].join('\n'), ctx.setupSecrets ?? []);
    if (unreached.length > 0) report.unreached = unreached;
  }
  if (native)
    report.native_build = {
      package: redact(native.package, ctx.setupSecrets ?? []),
      error: redact(native.error, ctx.setupSecrets ?? []),
    };
  if (notes.length > 0) report.notes = notes;
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
  if (result.egress) report.connections = connections;
  return report;
}

/** Every attempt's connections, one record per destination and outcome. */
function mergeConnections(
  before: NonNullable<SetupReport['connections']>,
  after: NonNullable<SetupReport['connections']>,
): NonNullable<SetupReport['connections']> {
  const merged = new Map(before.map((c) => [`${c.host}:${c.port}:${c.allowed}:${c.reason ?? ''}`, { ...c }]));
  for (const c of after) {
    const key = `${c.host}:${c.port}:${c.allowed}:${c.reason ?? ''}`;
    const had = merged.get(key);
    if (!had) merged.set(key, { ...c });
    else {
      had.requests += c.requests;
      had.bytes_out += c.bytes_out;
      had.bytes_in += c.bytes_in;
    }
  }
  return [...merged.values()];
}

/** What to run after a failed install: npm's own retries first, then once without dependencies' scripts. */
function nextInstall(
  install: string | undefined,
  result: { exitCode: number | null; stdout: string; stderr: string },
  scriptsOff: boolean,
  rootName: string | undefined,
): { install: string; why: string; scriptsOff?: true; unlocked?: true } | undefined {
  if (install === undefined || result.exitCode === 0) return undefined;
  const npm = install.startsWith('npm ') ? retriedInstall(install, result) : undefined;
  if (npm) return npm;
  if (scriptsOff || !takesIgnoreScripts(install)) return undefined;
  // npm 6 names the package, not its path: told from the root's own script by the root's name, or ''.
  const failed = failedDependencyScript(result.stdout + result.stderr, rootName ?? '');
  if (!failed) return undefined;
  return {
    install,
    why: `${failed.pkg}'s install script failed${failed.detail ? ` (${failed.detail})` : ''}`,
    scriptsOff: true,
  };
}

/** npm 6 to 11's words for a tarball the registry does not have: `npm ERR! 404 Not Found - GET <url>.tgz`. */
const GONE_TARBALL = /^npm (?:ERR!|error) 404 Not Found - GET \S*\/-\/(\S+)\.tgz\b/m;

/**
 * The npm install to try after a failed one, when npm's own words say what to change:
 * - ENOVERSIONS or ETARGET under `--before`: no version published before the base commit's date
 *   (a registry mirror whose publish dates are its own has nothing older than its first copy),
 *   so without `--before`: the newest versions the manifest's ranges allow;
 * - ERESOLVE: a peer dependency conflict npm 7+ refuses and npm 6, which an old repository was
 *   written against, allowed: with `--legacy-peer-deps`, npm 6's resolution;
 * - `npm ci` refusing a lockfile out of step with package.json (a change that edited one and not
 *   the other): `npm install`, which brings the lockfile up to date, as npm itself advises;
 * - a locked package's tarball the registry answers 404 for (a version since unpublished, or one
 *   an operator's mirror never copied): the lockfile cannot be installed as written anywhere this
 *   registry serves, so `npm install --no-package-lock`, the manifest's ranges resolved again
 *   (said in the verdict's notes: the versions tested are not the lockfile's).
 */
function retriedInstall(
  install: string,
  result: { exitCode: number | null; stdout: string; stderr: string },
): { install: string; why: string; unlocked?: true } | undefined {
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
  const gone = GONE_TARBALL.exec(said);
  if (gone && /^npm (ci|install) /.test(install) && !install.includes('--no-package-lock'))
    return {
      install: install.replace(/^npm (ci|install) /, 'npm install --no-package-lock '),
      why: `the lockfile names ${gone[1]}, which the registry does not serve (404)`,
      // from no node_modules: npm 6 takes the packages the failed `npm ci` extracted for installed
      // and links none of their bins (bpmn-js: `karma: not found` after an install that exited 0)
      unlocked: true,
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
