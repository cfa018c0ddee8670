import { ConfinedDir } from '../checkout/confined-fs.js';

/**
 * A dependency's install script that fails (a browser or binary download the proxy refuses, a
 * native build) need not sink the setup: the install runs again with dependencies' scripts off
 * and then runs the repository's own lifecycle scripts, as the package manager would have for
 * the root (docs/environments.md). Recognised only by the package managers' own words, from
 * their real output:
 *
 * npm 7 and later (`npm error` from npm 10, `npm ERR!` before):
 *   npm error path /workspace/repo/node_modules/bad-dl
 *   npm error command failed
 *   npm error command sh -c node install.js
 * yarn 1:
 *   error /workspace/repo/node_modules/bad-dl: Command failed.
 *   Exit code: 1
 *   Command: node install.js
 * pnpm:
 *   .../node_modules/bad-dl postinstall: Failed
 *    ELIFECYCLE  Command failed with exit code 1.
 * npm 5 and 6 (what a lockfileVersion 1 installs with), naming the package, not its path:
 *   npm ERR! Failed at the phantomjs-prebuilt@2.1.16 install script.
 * — a dependency's only where the package is not the root's own (its package.json `name`).
 */

/** The dependency whose script failed, and what it ran, when the output says so. */
export interface FailedScript {
  pkg: string;
  /** The script's command, or its lifecycle stage, when the output names it. */
  detail?: string;
}

const PKG = String.raw`node_modules/((?:@[^/\s]+/)?[^/\s:]+)`;
const NPM_PATH = new RegExp(String.raw`^npm (?:error|ERR!) path \S*${PKG}\s*$`, 'm');
const NPM_FAILED = /^npm (?:error|ERR!) command failed\s*$/m;
const NPM_COMMAND = /^npm (?:error|ERR!) command sh -c (.+)$/m;
const YARN = new RegExp(String.raw`^error \S*${PKG}: Command failed\.`, 'm');
const YARN_COMMAND = /^Command: (.+)$/m;
const PNPM = new RegExp(String.raw`${PKG} (preinstall|install|postinstall|prepare): Failed\s*$`, 'm');
const NPM_6 = /^npm ERR! Failed at the ((?:@[^/\s]+\/)?[^@\s]+)@\S+ (preinstall|install|postinstall) script\.?\s*$/m;

/** The dependency whose install script failed; `rootName` tells npm 6's words for the root's own script apart. */
export function failedDependencyScript(output: string, rootName?: string): FailedScript | undefined {
  const npm = NPM_PATH.exec(output);
  if (npm && NPM_FAILED.test(output)) return withDetail(npm[1]!, NPM_COMMAND.exec(output)?.[1]);
  const yarn = YARN.exec(output);
  if (yarn) return withDetail(yarn[1]!, YARN_COMMAND.exec(output)?.[1]);
  const pnpm = PNPM.exec(output);
  if (pnpm && /\bELIFECYCLE\b/.test(output)) return withDetail(pnpm[1]!, pnpm[2]);
  const npm6 = NPM_6.exec(output);
  if (npm6 && rootName !== undefined && npm6[1] !== rootName) return withDetail(npm6[1]!, npm6[2]);
  return undefined;
}

/** The root package's `name`, read through the confined file module; undefined when it has none. */
export function rootPackageName(repoDir: string): string | undefined {
  try {
    const text = new ConfinedDir(repoDir, { exclude: ['.git'] }).readText('package.json', { maxBytes: 1024 * 1024 });
    const name: unknown = text === undefined ? undefined : JSON.parse(text).name;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

const withDetail = (pkg: string, detail: string | undefined): FailedScript =>
  detail ? { pkg, detail: detail.trim().slice(0, 200) } : { pkg };

/**
 * The lifecycle scripts npm runs for the root package on install, in its order (npm's docs,
 * "npm install"); yarn 1 and pnpm run a subset of them.
 */
const ROOT_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepublish', 'preprepare', 'prepare', 'postprepare'];

/**
 * The root's own lifecycle scripts, those of its package.json (read through the confined file
 * module) in npm's order, each with `npm run --ignore-scripts`, which keeps npm from running its
 * pre/post scripts a second time (they are in the list themselves); undefined when it has none.
 */
export function rootLifecycle(repoDir: string): string | undefined {
  const present = ROOT_SCRIPTS.filter((s) => rootScripts(repoDir).has(s));
  return present.length > 0 ? present.map((s) => `npm run --ignore-scripts ${s}`).join(' && ') : undefined;
}

function rootScripts(repoDir: string): Set<string> {
  try {
    const text = new ConfinedDir(repoDir, { exclude: ['.git'] }).readText('package.json', { maxBytes: 1024 * 1024 });
    const scripts: unknown = text === undefined ? undefined : JSON.parse(text).scripts;
    return new Set(typeof scripts === 'object' && scripts !== null ? Object.keys(scripts) : []);
  } catch {
    return new Set();
  }
}

/** Whether the install is one of the package managers' that takes `--ignore-scripts` (npm, yarn 1, pnpm). */
export const takesIgnoreScripts = (install: string) =>
  /^(npm (ci|install)|yarn install --frozen-lockfile|pnpm install)\b/.test(install) &&
  !/ --ignore-scripts\b/.test(install);
