import { ConfinedDir } from '../checkout/confined-fs.js';
import { SANDBOX_WORKDIR } from '../sandbox/bwrap-args.js';
import { type NodeWants, nodeWants } from './node-wants.js';
import { pythonDeclared } from './python-deps.js';
import { pythonSetup, shellQuote } from './python-setup.js';

/**
 * How a repository is tested, decided from its files alone (reading files on the host runs
 * none of the repository's code). The command runs later, inside the sandbox.
 */
export type RunnerKind = 'node' | 'pytest' | 'unittest' | 'tox' | 'go' | 'cargo' | 'maven' | 'gradle' | 'make';

/**
 * Where the test command came from, in the order they are taken: the workspace's setting for the
 * repository, the repository's `.emend/test`, the repo memory, detection.
 */
export type RecipeSource = 'setting' | 'repo-file' | 'memory' | 'detected';

/** How per-test timeouts can be added to the command, for runners that allow them. */
export type PerTestTimeout =
  | { kind: 'node-test' }
  | { kind: 'jest' }
  | { kind: 'vitest' }
  | { kind: 'mocha' }
  | { kind: 'jasmine' }
  | { kind: 'pytest' }
  | { kind: 'go' }
  | { kind: 'none' };

export interface SetupRecipe {
  /** The install command when the sandbox allows network for setup. */
  command: string;
  /** The command without network, or undefined when nothing can be installed offline. */
  offlineCommand?: string;
  /**
   * The install only provides pytest (a Python repository declaring nothing): not run where
   * the sandbox's python imports pytest already.
   */
  onlyFor?: 'pytest';
  /**
   * npm without a lockfile: nothing pins the versions, so the install resolves them as of the
   * base commit's date (`--before`), and an old commit gets what it was written against.
   */
  resolveAsOf?: true;
}

export interface TestRecipe {
  /** The detected runner (undefined for a command from `.emend/test` or memory in a repo nothing was detected in). */
  runner: RunnerKind | undefined;
  source: RecipeSource;
  /** Shell command line of the test phase, before timeout flags are added. */
  command: string;
  /** How to pass per-test timeouts; only for detected commands, whose shape is known. */
  perTest: PerTestTimeout;
  /**
   * Setup commands run after the detected install, in order, in the same phase (with the same
   * network): the repository's `.emend/setup` and the workspace's setup setting.
   */
  extraSetup?: string[];
  /** The dependency install, when the repository has dependencies that are not there yet. */
  setup: SetupRecipe | null;
  /** The node version and package manager a Node repository asks for, when it asks. */
  node?: NodeWants;
  /**
   * Run in each tree before its tests, in the test phase (offline), as a Node project's CI builds
   * before it tests: the package's own build, when the entry point package.json names is not
   * in the tree (the tests load the built package). Guarded in the shell, so a tree where setup
   * already built it (a `prepare` script) does not build again.
   */
  build?: string;
}

export interface DetectOptions {
  /** The test command remembered for this repository (repo memory), if any. */
  testCommand?: string;
  /** The account's settings for the repository (PUT /v1/repos/settings): they come first. */
  settings?: { testCommand?: string; setupCommand?: string };
}

/**
 * The helper that names every jasmine spec (src/test-runs/jasmine-reporter.ts writes it there,
 * in the run's tools directory beside repo/ and home/): an absolute path, which jasmine's glob
 * takes as it is. Under a sandbox without the tools directory the glob matches nothing.
 */
export const JASMINE_HELPER_PATH = `${SANDBOX_WORKDIR}/emend/emend-jasmine-specs.js`;

/** npm's placeholder for a package without tests. */
const NPM_PLACEHOLDER = /no test specified/;

/** Configuration files are small; a larger one is not read. */
const MAX_READ_BYTES = 1024 * 1024;

/**
 * The checkout's files through the confined file module (src/checkout/confined-fs.ts): a
 * package.json or .emend/test that is a symlink out of the checkout, or a FIFO, reads as absent.
 */
const confined = (dir: string): ConfinedDir | undefined => {
  try {
    return new ConfinedDir(dir, { exclude: ['.git'] });
  } catch {
    return undefined;
  }
};

const read = (dir: string, file: string): string | undefined =>
  confined(dir)?.readText(file, { maxBytes: MAX_READ_BYTES });

/** Whether a file or directory is there, inside the checkout. */
const exists = (dir: string, path: string): boolean => {
  const kind = confined(dir)?.info(path).kind;
  return kind === 'file' || kind === 'dir';
};

/** The first line of `.emend/test` that is neither blank nor a comment. */
export function repoTestFile(dir: string): string | undefined {
  const text = read(dir, '.emend/test');
  if (text === undefined) return undefined;
  return text
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '' && !l.startsWith('#'));
}

/** `.emend/setup` replaces the detected install when its first line says so. */
const REPLACES_DETECTION = /^#\s*emend:\s*replace-detected-setup\s*$/i;

/**
 * The repository's own setup script, `.emend/setup`, if it is a regular file of the checkout:
 * run with `sh` in the setup phase, after the detected install unless its first line is
 * `# emend: replace-detected-setup`.
 */
export function repoSetupFile(dir: string): { command: string; replacesDetection: boolean } | undefined {
  const text = read(dir, '.emend/setup');
  if (text === undefined) return undefined;
  return { command: 'sh .emend/setup', replacesDetection: REPLACES_DETECTION.test(text.split('\n')[0]!.trim()) };
}

/**
 * The test recipe for a checkout, or undefined when the repository has no tests we can find.
 * The test command is the first of: the workspace's setting for the repository, `.emend/test`,
 * the remembered command, detection. The setup is detection's install (an override names the
 * command, not how the dependencies get there), then `.emend/setup`, then the workspace's setup
 * setting; `.emend/setup` may replace the detected install (docs/environments.md).
 */
export function detectTestRecipe(dir: string, options: DetectOptions = {}): TestRecipe | undefined {
  const detected = detectRunner(dir);
  const own = repoSetupFile(dir);
  const setting = options.settings?.setupCommand?.trim() || undefined;
  const extraSetup = [...(own ? [own.command] : []), ...(setting ? [setting] : [])];
  const withSetup = (recipe: TestRecipe): TestRecipe => ({
    ...recipe,
    setup: own?.replacesDetection ? null : recipe.setup,
    ...(extraSetup.length > 0 ? { extraSetup } : {}),
  });
  const sources: [RecipeSource, string | undefined][] = [
    ['setting', options.settings?.testCommand?.trim() || undefined],
    ['repo-file', repoTestFile(dir)],
    ['memory', options.testCommand?.trim() || undefined],
  ];
  const chosen = sources.find(([, command]) => command !== undefined);
  // A remembered command is the one detection found on an earlier run, as the validator ran it (its
  // flags after it). Where detection still finds it, the detected recipe runs: it adds the flags again
  // and keeps what runs as written would lose (per-test timeouts, the focused pass, the cores).
  const remembered = chosen?.[0] === 'memory' ? chosen[1]! : undefined;
  if (
    detected &&
    remembered !== undefined &&
    (remembered === detected.command || remembered.startsWith(`${detected.command} `))
  )
    return withSetup(detected);
  if (chosen) {
    return withSetup({
      runner: detected?.runner,
      source: chosen[0],
      command: chosen[1]!,
      perTest: { kind: 'none' },
      setup: detected?.setup ?? null,
      ...(detected?.node ? { node: detected.node } : {}),
    });
  }
  return detected && withSetup(detected);
}

function detectRunner(dir: string): TestRecipe | undefined {
  return node(dir) ?? python(dir) ?? go(dir) ?? cargo(dir) ?? maven(dir) ?? gradle(dir) ?? make(dir);
}

const recipe = (
  runner: RunnerKind,
  command: string,
  perTest: PerTestTimeout,
  setup: SetupRecipe | null = null,
): TestRecipe => ({
  runner,
  source: 'detected',
  command,
  perTest,
  setup,
});

function node(dir: string): TestRecipe | undefined {
  const text = read(dir, 'package.json');
  if (text === undefined) return undefined;
  let pkg: {
    engines?: unknown;
    volta?: unknown;
    scripts?: Record<string, unknown>;
    dependencies?: object;
    devDependencies?: object;
    optionalDependencies?: object;
    packageManager?: unknown;
  };
  try {
    pkg = JSON.parse(text);
  } catch {
    return undefined;
  }
  const script = pkg.scripts?.test;
  if (typeof script !== 'string' || script.trim() === '' || NPM_PLACEHOLDER.test(script)) return undefined;
  const pm = packageManager(dir, typeof pkg.packageManager === 'string' ? pkg.packageManager : undefined);
  const deps = [pkg.dependencies, pkg.devDependencies, pkg.optionalDependencies].some(
    (d) => d && Object.keys(d).length > 0,
  );
  const setup = deps && !exists(dir, 'node_modules') ? nodeSetup(dir, pm) : null;
  const command = pm === 'npm' ? 'npm test' : `${pm} run test`;
  const build = buildFirst(dir, pkg, pm);
  const detected = { ...recipe('node', command, scriptTimeoutStyle(script), setup), ...(build ? { build } : {}) };
  const files = confined(dir);
  const wants = files ? nodeWants(files, pkg, pm) : {};
  return Object.keys(wants).length > 0 ? { ...detected, node: wants } : detected;
}

type PackageManager = 'npm' | 'pnpm' | 'yarn';

/** A path package.json names inside the package, without `./`; undefined for anything else. */
function packagePath(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const path = value.replace(/^\.\//, '');
  if (path === '' || path.startsWith('/') || path.split('/').includes('..') || /[\0\n]/.test(path)) return undefined;
  return path;
}

/**
 * The build to run before the tests: where package.json has a `build` script, its entry point
 * (`main`, else `exports` as a path or its `"."`) names a file the tree does not have, and neither
 * `test` nor `pretest` builds already. `{ [ -e 'main' ] || npm run build || echo …; }`: the shell
 * looks again in the tree, since setup (a `prepare` script) may have built it, and a failed build
 * is said, not fatal.
 */
function buildFirst(
  dir: string,
  pkg: { scripts?: Record<string, unknown>; main?: unknown; exports?: unknown },
  pm: PackageManager,
): string | undefined {
  const scripts = pkg.scripts ?? {};
  if (typeof scripts.build !== 'string' || scripts.build.trim() === '') return undefined;
  if ([scripts.test, scripts.pretest].some((s) => typeof s === 'string' && /\bbuild\b/.test(s))) return undefined;
  const exported = pkg.exports;
  const dot =
    exported !== null && typeof exported === 'object' ? (exported as Record<string, unknown>)['.'] : undefined;
  const entry = packagePath(pkg.main) ?? packagePath(exported) ?? packagePath(dot);
  if (entry === undefined || exists(dir, entry)) return undefined;
  const run = pm === 'npm' ? 'npm run build' : `${pm} run build`;
  // A build that fails does not stop the tests: many projects' tests load their sources, and their
  // build does more than they need (dayjs's runs a bundler and a size check that webpack 4 fails on
  // Node 17+); tests that do load the build fail by name without it.
  return `{ [ -e ${shellQuote(entry)} ] || ${run} || echo ${shellQuote(`emend: ${run} failed (above); the tests run without it`)} >&2; }`;
}

function packageManager(dir: string, declared: string | undefined): PackageManager {
  if (exists(dir, 'pnpm-lock.yaml')) return 'pnpm';
  if (exists(dir, 'yarn.lock')) return 'yarn';
  if (exists(dir, 'package-lock.json') || exists(dir, 'npm-shrinkwrap.json')) return 'npm';
  if (declared?.startsWith('pnpm@')) return 'pnpm';
  if (declared?.startsWith('yarn@')) return 'yarn';
  return 'npm';
}

function nodeSetup(dir: string, pm: PackageManager): SetupRecipe {
  if (pm === 'pnpm')
    return { command: 'pnpm install --frozen-lockfile', offlineCommand: 'pnpm install --frozen-lockfile --offline' };
  if (pm === 'yarn') {
    // Yarn 2+ (a .yarnrc.yml) replaced --frozen-lockfile with --immutable.
    const berry = exists(dir, '.yarnrc.yml');
    return berry
      ? { command: 'yarn install --immutable' }
      : { command: 'yarn install --frozen-lockfile', offlineCommand: 'yarn install --frozen-lockfile --offline' };
  }
  const locked = exists(dir, 'package-lock.json') || exists(dir, 'npm-shrinkwrap.json');
  // Without a lockfile nothing pins the versions, and offline there is no cache to install from.
  return locked
    ? { command: 'npm ci --no-audit --no-fund', offlineCommand: 'npm ci --offline --no-audit --no-fund' }
    : { command: 'npm install --no-audit --no-fund', resolveAsOf: true };
}

/** Options of node that take a separate value (`--import tsx`). */
const NODE_VALUE_OPTIONS = new Set([
  '--import',
  '--require',
  '-r',
  '--loader',
  '--experimental-loader',
  '--test-reporter',
  '--test-reporter-destination',
  '--test-name-pattern',
  '--test-concurrency',
]);

/**
 * Which timeout flags can be appended to `npm test -- ...`. npm appends the arguments to the
 * end of the script, so they reach its last command: the script's last simple command (after
 * its last `&&`, `||`, `;` or `|`) must be one command of a known runner, with nothing in it
 * that could move where they land (quotes, redirections, subshells). `node --test` also needs
 * no file arguments, since node reads options only before the first positional; a runner's
 * entry point started by node (`node --experimental-vm-modules node_modules/jest/bin/jest.js`)
 * is that runner.
 */
export function scriptTimeoutStyle(script: string): PerTestTimeout {
  if (/[`\n]|\$\(/.test(script)) return { kind: 'none' };
  const last = script.split(/&&|\|\||;|\|/).pop() ?? '';
  if (/[&|<>$()'"]/.test(last)) return { kind: 'none' };
  const tokens = last.trim().split(/\s+/);
  while (tokens.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[0]!)) tokens.shift();
  const [bin, ...rest] = tokens;
  if (bin === 'node') {
    for (let i = 0; i < rest.length; i++) {
      const t = rest[i]!;
      if (!t.startsWith('-')) return rest.includes('--test') ? { kind: 'none' } : runnerAt(t);
      if (NODE_VALUE_OPTIONS.has(t)) i++;
    }
    return rest.includes('--test') ? { kind: 'node-test' } : { kind: 'none' };
  }
  return runner(bin, rest[0]);
}

/** A runner by its command's name: `jest`, `vitest` (run, not watch), `mocha`. */
function runner(bin: string | undefined, first: string | undefined): PerTestTimeout {
  if (bin === 'jest') return { kind: 'jest' };
  if (bin === 'vitest' && (first === undefined || first === 'run' || first.startsWith('-'))) return { kind: 'vitest' };
  if (bin === 'mocha' || bin === '_mocha') return { kind: 'mocha' };
  if (bin === 'jasmine') return { kind: 'jasmine' };
  return { kind: 'none' };
}

/** The runner whose entry point node was given (`node_modules/jest/bin/jest.js`, `node_modules/.bin/_mocha`). */
function runnerAt(path: string): PerTestTimeout {
  const m = /(?:^|\/)node_modules\/(?:\.bin\/(jest|mocha|_mocha)|(jest|mocha)\/bin\/(?:jest|_?mocha)(?:\.js)?)$/.exec(
    path,
  );
  return runner(m?.[1] ?? m?.[2], undefined);
}

const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  '.venv',
  'venv',
  '.tox',
  '__pycache__',
  'site-packages',
  'dist',
  'build',
  'target',
]);

/** Python files that look like tests, at most `limit`, at most four directories deep. */
function pythonTestFiles(dir: string, limit = 50): string[] {
  const name = (path: string) => path.slice(path.lastIndexOf('/') + 1);
  return (
    confined(dir)?.walkFiles({
      skipDirs: SKIP_DIRS,
      skipHidden: true,
      maxDepth: 4,
      limit,
      accept: (p) => !SKIP_DIRS.has(name(p)) && /^test_.*\.py$|_test\.py$|^tests?\.py$/.test(name(p)),
    }) ?? []
  );
}

function python(dir: string): TestRecipe | undefined {
  const pyproject = read(dir, 'pyproject.toml') ?? '';
  const setupCfg = read(dir, 'setup.cfg') ?? '';
  const tox = read(dir, 'tox.ini');
  const files = pythonTestFiles(dir);
  const pytestConfigured =
    /\[tool\.pytest/.test(pyproject) ||
    exists(dir, 'pytest.ini') ||
    /\[tool:pytest\]/.test(setupCfg) ||
    /^\[pytest\]/m.test(tox ?? '') ||
    exists(dir, 'conftest.py');
  const sources = files.map((f) => read(dir, f) ?? '');
  const pytestStyle = sources.some((s) => /^\s*(import pytest|from pytest)|^def test_/m.test(s));
  const unittestStyle = sources.some((s) => /\bunittest\b/.test(s));
  const checkout = confined(dir);
  const declared = checkout ? pythonDeclared(checkout) : undefined;
  const setup = (usesPytest: boolean) => (declared ? pythonSetup(declared, usesPytest) : null);
  if (pytestConfigured || pytestStyle || (tox !== undefined && /pytest/.test(tox)))
    return recipe('pytest', 'python3 -m pytest', { kind: 'pytest' }, setup(true));
  if (tox !== undefined && /^\[tox\]|^\[tox:tox\]/m.test(tox)) return recipe('tox', 'tox', { kind: 'none' }, null);
  if (unittestStyle) return recipe('unittest', 'python3 -m unittest discover -v', { kind: 'none' }, setup(false));
  if (files.length > 0) return recipe('pytest', 'python3 -m pytest', { kind: 'pytest' }, setup(true));
  return undefined;
}

function go(dir: string): TestRecipe | undefined {
  const mod = read(dir, 'go.mod');
  if (mod === undefined) return undefined;
  const needs = /^require\b/m.test(mod) && !exists(dir, 'vendor');
  return recipe('go', 'go test -json ./...', { kind: 'go' }, needs ? { command: 'go mod download' } : null);
}

function cargo(dir: string): TestRecipe | undefined {
  if (!exists(dir, 'Cargo.toml')) return undefined;
  // The test phase has no network: fetched crates must come from the setup phase.
  return recipe('cargo', 'cargo test --offline', { kind: 'none' }, { command: 'cargo fetch' });
}

function maven(dir: string): TestRecipe | undefined {
  if (!exists(dir, 'pom.xml')) return undefined;
  const mvn = exists(dir, 'mvnw') ? './mvnw' : 'mvn';
  return recipe(
    'maven',
    `${mvn} -B test`,
    { kind: 'none' },
    { command: `${mvn} -B -q -DskipTests test-compile dependency:go-offline` },
  );
}

function gradle(dir: string): TestRecipe | undefined {
  if (!['build.gradle', 'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts'].some((f) => exists(dir, f)))
    return undefined;
  const bin = exists(dir, 'gradlew') ? './gradlew' : 'gradle';
  return recipe(
    'gradle',
    `${bin} --no-daemon --offline test`,
    { kind: 'none' },
    { command: `${bin} --no-daemon testClasses` },
  );
}

function make(dir: string): TestRecipe | undefined {
  const makefile = ['GNUmakefile', 'makefile', 'Makefile'].map((f) => read(dir, f)).find((t) => t !== undefined);
  if (makefile === undefined || !/^test\s*:/m.test(makefile)) return undefined;
  return recipe('make', 'make test', { kind: 'none' });
}

/** What the sandbox reported when probed, for flags that depend on versions or plugins. */
export interface Probe {
  nodeVersion?: [number, number];
  pytestTimeout?: boolean;
  /** The installed jest's version: `--testTimeout` came in 24.9, and older ones refuse the whole run for it. */
  jestVersion?: [number, number];
  /** The installed jasmine's version: 4.0 to 4.5 crash on `--helper`, 3.1 and older ignore `--require`. */
  jasmineVersion?: [number, number];
}

/** The shell command that asks the sandbox what the flags depend on, or undefined if nothing. */
export function probeCommand(recipe: TestRecipe): string | undefined {
  if (recipe.perTest.kind === 'node-test') return 'node -p process.versions.node';
  if (recipe.perTest.kind === 'jest')
    return `node -p "'jest ' + require('jest/package.json').version" 2>/dev/null || echo no-jest`;
  if (recipe.perTest.kind === 'pytest')
    return 'python3 -c "import pytest_timeout" >/dev/null 2>&1 && echo pytest-timeout || echo no-plugin';
  if (recipe.perTest.kind === 'jasmine')
    // By its path: jasmine 4's `exports` do not export its package.json to a bare `jasmine/…`.
    return `node -p "'jasmine ' + require('./node_modules/jasmine/package.json').version" 2>/dev/null || echo no-jasmine`;
  return undefined;
}

export function readProbe(output: string): Probe {
  const version = /^(\d+)\.(\d+)\.\d+/m.exec(output);
  const jest = /^jest (\d+)\.(\d+)\./m.exec(output);
  const jasmine = /^jasmine (\d+)\.(\d+)\./m.exec(output);
  return {
    nodeVersion: version ? [Number(version[1]), Number(version[2])] : undefined,
    ...(jest ? { jestVersion: [Number(jest[1]), Number(jest[2])] as [number, number] } : {}),
    ...(jasmine ? { jasmineVersion: [Number(jasmine[1]), Number(jasmine[2])] as [number, number] } : {}),
    pytestTimeout: /^pytest-timeout$/m.test(output),
  };
}

function atLeast(v: [number, number] | undefined, ...mins: [number, number][]): boolean {
  if (v === undefined) return false;
  if (v[0] > Math.max(...mins.map((m) => m[0]))) return true;
  return mins.some(([major, minor]) => v[0] === major && v[1] >= minor);
}

/**
 * The test command with per-test timeouts and machine-readable output where the runner
 * allows them, so one hanging test fails at its timeout and the others are still reported.
 * `runSeconds` is the whole run's limit (go's -timeout is per test binary).
 */
/** The recipe's command as a person (or the agent) runs it in a tree: the build first, where there is one. */
export const runnableCommand = (recipe: TestRecipe): string =>
  recipe.build ? `${recipe.build} && ${recipe.command}` : recipe.command;

export function commandWithTimeouts(
  recipe: TestRecipe,
  testSeconds: number,
  runSeconds: number,
  probe: Probe,
  options: { pytestProgress?: boolean } = {},
): string {
  const timed = timedCommand(recipe, testSeconds, runSeconds, probe, options);
  return recipe.build ? `${recipe.build} && ${timed}` : timed;
}

function timedCommand(
  recipe: TestRecipe,
  testSeconds: number,
  runSeconds: number,
  probe: Probe,
  options: { pytestProgress?: boolean },
): string {
  const ms = testSeconds * 1000;
  const pass = (args: string) =>
    recipe.command.startsWith('npm ') ? `${recipe.command} -- ${args}` : `${recipe.command} ${args}`;
  switch (recipe.perTest.kind) {
    case 'node-test': {
      // --test-timeout: 20.11 / 21.2; --test-force-exit (a file whose tests ended but left a timer): 20.14 / 22.
      const flags = ['--test-reporter=tap'];
      if (atLeast(probe.nodeVersion, [20, 11], [21, 2])) flags.push(`--test-timeout=${ms}`);
      if (atLeast(probe.nodeVersion, [20, 14], [22, 0])) flags.push('--test-force-exit');
      return pass(flags.join(' '));
    }
    case 'jest':
      // An unknown version (the probe found no jest package) keeps the flag: a current jest is the likely one.
      return probe.jestVersion && !atLeast(probe.jestVersion, [24, 9])
        ? pass('--verbose')
        : pass(`--testTimeout=${ms} --verbose`);
    case 'vitest':
      return pass(`--testTimeout=${ms} --reporter=verbose`);
    case 'mocha':
      return pass(`--timeout ${ms}`);
    case 'jasmine':
      // No per-spec timeout flag; the helper that names every spec (src/test-runs/jasmine-reporter.ts),
      // loaded by the flag the installed jasmine takes: --require from 4 (4.0 to 4.5 crash on
      // --helper), --helper before (3.1 and older ignore --require).
      return pass(
        probe.jasmineVersion && probe.jasmineVersion[0] >= 4
          ? `--require=${JASMINE_HELPER_PATH}`
          : `--helper=${JASMINE_HELPER_PATH}`,
      );
    case 'pytest': {
      // faulthandler dumps the hanging test's stack; pytest-timeout, where installed, ends it;
      // the progress plugin lets the validator end it otherwise (run.ts, watchPytest).
      const timeout = probe.pytestTimeout ? ` -o timeout=${testSeconds}` : '';
      const progress = options.pytestProgress ? ' -p emend_progress' : '';
      // A test module that does not import (a reproduction test of a function the change adds,
      // run on the base commit) must not stop the other modules' tests from running.
      const flags = '-v -rA -p no:cacheprovider --continue-on-collection-errors';
      return `${recipe.command} ${flags}${progress} -o faulthandler_timeout=${testSeconds}${timeout}`;
    }
    case 'go':
      return recipe.command.replace('go test ', `go test -timeout ${Math.max(1, Math.floor(runSeconds * 0.9))}s `);
    case 'none':
      return recipe.command;
  }
}
