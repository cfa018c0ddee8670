#!/usr/bin/env node
// The system packages `npm start` and `npm test` need, checked before they run: as root with
// apt-get at hand the missing ones are installed, otherwise the command stops with the exact
// line to run. Plain Node with no dependencies, and only file lookups when everything is
// there, so it costs a Node start-up and nothing more.
//
//   node scripts/system-check.mjs start|test
//
// EMEND_SYSCHECK_ROOT (for its own tests): every probe, the apt-get it runs included, looks
// under this directory instead of /, so a missing package can be shown without removing it.

import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Debian packages, what needs each, and how to tell it is installed. `commands` are looked
 * up on PATH; `files` are absolute paths; `postgres` is a server bin dir under
 * /usr/lib/postgresql (what the tests' cluster uses); `python` a module /usr/bin/python3 imports.
 * @type {ReadonlyArray<import('./system-check.d.mts').SystemPackage>}
 */
export const PACKAGES = [
  { name: 'git', for: ['start', 'test'], commands: ['git'] },
  { name: 'bubblewrap', for: ['start', 'test'], commands: ['bwrap'] },
  // runuser (the tests' PostgreSQL cluster runs as postgres), prlimit (sandbox limits), flock (mirror locks)
  { name: 'util-linux', for: ['start', 'test'], commands: ['runuser', 'prlimit', 'flock'] },
  // Scaffold tasks check and screenshot sites in Debian's headless Chromium (docs/sites.md);
  // the fonts so text renders in the screenshots.
  { name: 'chromium', for: ['start', 'test'], files: ['/usr/bin/chromium'], unlessEnv: 'EMEND_CHROMIUM_PATH' },
  { name: 'fonts-dejavu-core', for: ['start', 'test'], files: ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf'] },
  // The validator makes a virtualenv per Python repository (venv's ensurepip, pip in it), and
  // pytest from the distribution serves repositories that do not declare it, also offline.
  { name: 'python3-venv', for: ['start', 'test'], python: 'ensurepip' },
  { name: 'python3-pip', for: ['start', 'test'], python: 'pip' },
  { name: 'python3-pytest', for: ['start', 'test'], python: 'pytest' },
  // A repository's native modules build in the sandbox at setup (node-gyp: python3, make, a C++
  // compiler; Python's C extensions the same): build-essential brings make, gcc and g++.
  { name: 'build-essential', for: ['start', 'test'], commands: ['make', 'g++'] },
  // `emend eval` runs a benchmark's tests at its base commit's date through libfaketime
  // (src/test-runs/test-clock.ts); the faketime package brings the library and its command.
  { name: 'faketime', for: ['start', 'test'], commands: ['faketime'] },
  { name: 'postgresql', for: ['test'], postgres: true },
  // script(1): the remote CLI's tests run it under a real pseudo-terminal (test/cli/remote-process.ts).
  { name: 'bsdutils', for: ['test'], commands: ['script'] },
  // kubectl kustomize renders deploy/kubernetes for its offline schema test (test/deploy/kubernetes.test.ts).
  { name: 'kubernetes-client', for: ['test'], files: ['/usr/bin/kubectl'] },
];

/**
 * What to do about the missing packages: nothing, install them (root with apt-get), or stop
 * with the command that installs them.
 * @param {{ purpose: 'start' | 'test', missing: string[], isRoot: boolean, hasAptGet: boolean }} facts
 * @returns {import('./system-check.d.mts').Plan}
 */
export function plan({ purpose, missing, isRoot, hasAptGet }) {
  if (missing.length === 0) return { action: 'none' };
  const list = missing.join(' ');
  if (isRoot && hasAptGet) {
    return {
      action: 'install',
      packages: missing,
      line: `npm ${purpose}: installing missing system packages: ${list} (apt-get install -y ${list})`,
    };
  }
  const command = `sudo apt-get install -y ${list}`;
  const why = !hasAptGet
    ? `This machine has no apt-get: install these Debian packages or their equivalents, then run npm ${purpose} ` +
      `again. On Debian or Ubuntu:`
    : `Run this (as root it is done for you), then npm ${purpose} again:`;
  return {
    action: 'stop',
    packages: missing,
    command,
    message: `npm ${purpose} needs system packages that are missing: ${list}.\n${why}\n  ${command}`,
  };
}

/**
 * Looks at the machine, under `root` (normally /).
 * @param {string} root
 * @param {NodeJS.ProcessEnv} env
 */
export function probe(root, env) {
  const under = (path) => join(root, path);
  const executable = (path) => {
    try {
      accessSync(path, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const pathDirs = (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter).filter((d) => d.startsWith('/'));
  const onPath = (command) => pathDirs.some((dir) => executable(under(join(dir, command))));
  const postgresBin = () => {
    try {
      return readdirSync(under('/usr/lib/postgresql')).some(
        (v) =>
          existsSync(under(`/usr/lib/postgresql/${v}/bin/initdb`)) &&
          existsSync(under(`/usr/lib/postgresql/${v}/bin/pg_ctl`)),
      );
    } catch {
      return false;
    }
  };
  const pythonModule = (module) => {
    // Debian's python3-* packages install here; asking python itself costs a third of a
    // second, so only when the file is not where Debian puts it (a pip install, say).
    if (existsSync(under(`/usr/lib/python3/dist-packages/${module}/__init__.py`))) return true;
    const python = under('/usr/bin/python3');
    if (!executable(python)) return false;
    return spawnSync(python, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0;
  };
  /** @param {import('./system-check.d.mts').SystemPackage} p */
  const installed = (p) =>
    (p.commands ?? []).every(onPath) &&
    (p.files ?? []).every((f) => existsSync(under(f))) &&
    (!p.postgres || postgresBin()) &&
    (!p.python || pythonModule(p.python));
  return { installed, aptGet: pathDirs.map((dir) => under(join(dir, 'apt-get'))).find(executable) };
}

/**
 * The packages `purpose` needs that are not installed.
 * @param {'start' | 'test'} purpose
 * @param {(p: import('./system-check.d.mts').SystemPackage) => boolean} installed
 * @param {NodeJS.ProcessEnv} env
 */
export function missingFor(purpose, installed, env) {
  return PACKAGES.filter(
    (p) => p.for.includes(purpose) && !(p.unlessEnv && env[p.unlessEnv]?.trim()) && !installed(p),
  ).map((p) => p.name);
}

/**
 * Runs the check; returns the exit code.
 * @param {'start' | 'test'} purpose
 * @param {NodeJS.ProcessEnv} env
 */
export function main(purpose, env = process.env) {
  const root = env.EMEND_SYSCHECK_ROOT || '/';
  const { installed, aptGet } = probe(root, env);
  const missing = missingFor(purpose, installed, env);
  const decided = plan({ purpose, missing, isRoot: process.getuid?.() === 0, hasAptGet: aptGet !== undefined });
  if (decided.action === 'none') return 0;
  if (decided.action === 'stop') {
    console.error(decided.message);
    return 1;
  }
  console.log(decided.line);
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  // apt's own output is shown only when it fails: the one line above says what happens.
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...decided.packages],
  ]) {
    const run = spawnSync(/** @type {string} */ (aptGet), args, {
      env: aptEnv,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (run.status !== 0) {
      process.stderr.write(`${run.stdout ?? ''}${run.stderr ?? ''}`);
      console.error(
        `apt-get ${args[0]} failed (${run.error?.message ?? `exit ${run.status}`}); install by hand: apt-get ` +
          `install -y ${decided.packages.join(' ')}`,
      );
      return 1;
    }
  }
  const still = missingFor(purpose, probe(root, env).installed, env);
  if (still.length > 0) {
    console.error(`still missing after apt-get install: ${still.join(' ')}`);
    return 1;
  }
  return 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const purpose = process.argv[2];
  if (purpose !== 'start' && purpose !== 'test') {
    console.error('usage: node scripts/system-check.mjs start|test');
    process.exit(2);
  }
  process.exitCode = main(purpose);
}
