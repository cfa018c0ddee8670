import type { SetupReport, SetupState } from '../step-contract/fix.js';
import type { RunTree } from './copies.js';
import type { TestRecipe } from './detect.js';
import { type RunContext, SANDBOX_REPO, normalizeOutput, sandboxed, tail } from './sandboxed.js';
import { nativeBuildFailure } from './native-build.js';
import { removeFilesHoldingSecrets } from './secret-scrub.js';
import { redact } from './setup-output.js';

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
  let command = commandOf(install);
  const output = ctx.setupOutput;
  const run = (line: string) =>
    sandboxed(ctx, tree, {
      command: line,
      timeoutMs: ctx.limits.setupTimeoutMs,
      network,
      outputBytes: 1024 * 1024,
      ...(ctx.setupEnv ? { env: ctx.setupEnv } : {}),
      ...(output ? { onOutput: (chunk: Buffer) => output.push(chunk) } : {}),
    }).finally(() => output?.flush());
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
  if (result.exitCode !== 0) {
    const said = normalizeOutput(result.stdout + result.stderr, [SANDBOX_REPO, tree.repo]);
    report.log_tail = redact(tail(said, 30, 2000), ctx.setupSecrets ?? []);
    // A native module that did not build is named as such, not as a failed install (docs/environments.md).
    const native = nativeBuildFailure(said);
    if (native)
      report.native_build = {
        package: redact(native.package, ctx.setupSecrets ?? []),
        error: redact(native.error, ctx.setupSecrets ?? []),
      };
  }
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
