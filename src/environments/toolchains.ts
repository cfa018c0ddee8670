import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Sandbox } from '../sandbox/types.js';
import type { TestRecipe } from './detect.js';

/**
 * The toolchains the sandbox has, as a command inside it sees them (/usr and the tool roots,
 * not the host's PATH). Asked once at start-up for /health, and per validation for only what
 * the repository needs, so a missing one is named before anything runs.
 */
export const TOOLCHAINS = [
  'python',
  'venv',
  'pytest',
  'node',
  'npm',
  'pnpm',
  'yarn',
  'go',
  'cargo',
  'java',
  'maven',
  'gradle',
  'tox',
  'make',
  'chromium',
] as const;
export type Toolchain = (typeof TOOLCHAINS)[number];

/** The version found of each toolchain asked about; absent when it is not there. */
export type ToolchainFacts = Partial<Record<Toolchain, string>>;

/**
 * One sh line per toolchain, printing `name=version` when it is there. Python's are asked
 * without importing (find_spec, metadata): importing pytest costs a tenth of a second.
 */
const PROBES: Record<Toolchain, string> = {
  python: `python3 -c 'import platform; print("python=" + platform.python_version())'`,
  // Debian ships ensurepip in python3-venv: without it `python3 -m venv` makes no pip.
  venv: `python3 -c 'import importlib.util as u, sys; sys.exit(u.find_spec("ensurepip") is None)' && echo venv=yes`,
  pytest: `python3 -c 'import importlib.metadata as m; print("pytest=" + m.version("pytest"))'`,
  node: `node -p '"node=" + process.versions.node'`,
  // From the package.json beside npm's own CLI where `npm` leads there (Debian's, a node
  // distribution's): starting npm for `-v` is a tenth of a second of every validation.
  npm:
    'p=$(readlink -f "$(command -v npm)"); v=; case "$p" in */npm/bin/npm-cli.js) ' +
    `v=$(sed -n 's/^  "version": "\\([^"]*\\)".*/\\1/p' "\${p%/bin/npm-cli.js}/package.json" | head -n 1);; esac; ` +
    // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, the ${v:-…} is the shell's own.
    'echo "npm=${v:-$(npm -v)}"',
  pnpm: 'echo "pnpm=$(pnpm -v)"',
  yarn: 'echo "yarn=$(yarn -v)"',
  go: `go env GOVERSION | sed 's/^go/go=/'`,
  cargo: `cargo --version | sed 's/^cargo \\([^ ]*\\).*/cargo=\\1/'`,
  java: `java -version 2>&1 | sed -n '1s/.*version "\\([^"]*\\)".*/java=\\1/p'`,
  maven: `mvn -v 2>/dev/null | sed -n '1s/^Apache Maven \\([^ ]*\\).*/maven=\\1/p'`,
  gradle: `gradle --version --offline 2>/dev/null | sed -n 's/^Gradle \\(.*\\)/gradle=\\1/p'`,
  tox: `echo "tox=$(tox --version | cut -d' ' -f1)"`,
  make: `make --version | sed -n '1s/^GNU Make \\(.*\\)/make=\\1/p'`,
  // The sandbox's browser (its report's `browser`, given to the probe as CHROME_BIN): "Chromium 120.0.6099.224 built on …".
  chromium: `"$CHROME_BIN" --version | sed -n '1s/^[^0-9]* \\([0-9][0-9.]*\\).*/chromium=\\1/p'`,
};

/** The probe script: only the toolchains whose command is on PATH are started. */
export function probeScript(names: readonly Toolchain[]): string {
  const command: Partial<Record<Toolchain, string>> = {
    python: 'python3',
    venv: 'python3',
    pytest: 'python3',
    maven: 'mvn',
    chromium: '"$CHROME_BIN"',
  };
  return names
    .map((name) => `command -v ${command[name] ?? name} >/dev/null 2>&1 && { ${PROBES[name]}; } 2>/dev/null`)
    .join('; ');
}

export function readFacts(output: string, names: readonly Toolchain[]): ToolchainFacts {
  const facts: ToolchainFacts = {};
  for (const line of output.split('\n')) {
    const m = /^([a-z]+)=(\S+)$/.exec(line.trim());
    if (m && (names as readonly string[]).includes(m[1]!)) facts[m[1] as Toolchain] = m[2]!;
  }
  return facts;
}

export interface ProbeOptions {
  signal?: AbortSignal;
  /** A directory to run in (bound at /workspace); a temporary one otherwise. */
  workdir?: string;
  /** Host directories to bind read-only and put first on PATH (a fetched node). */
  toolRoots?: string[];
  pathPrefix?: string[];
  /** Instead of the probe script of `names`: a command printing `node=<version>` lines (a fetched binary by its path). */
  script?: string;
}

/** Asks the sandbox which of `names` it has, and their versions. */
export async function probeToolchains(
  sandbox: Sandbox,
  names: readonly Toolchain[],
  options: ProbeOptions = {},
): Promise<ToolchainFacts> {
  if (names.length === 0 && options.script === undefined) return {};
  const workdir = options.workdir ?? (await mkdtemp(join(tmpdir(), 'emend-toolchains-')));
  const browser = names.includes('chromium') ? sandbox.report().browser : undefined;
  try {
    const path = options.pathPrefix?.length ? `PATH='${options.pathPrefix.join(':')}':"$PATH"; ` : '';
    const result = await sandbox.run({
      command: ['sh', '-c', `${path}${options.script ?? probeScript(names)}; exit 0`],
      workdir,
      ...(browser ? { env: { CHROME_BIN: browser } } : {}),
      // Gradle and Maven start a JVM each: the start-up probe may take a few seconds.
      limits: { timeoutMs: 60_000, outputBytes: 64 * 1024 },
      ...(options.toolRoots?.length ? { toolRoots: options.toolRoots } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    // Cut short, it would report every toolchain missing.
    if (result.timedOut || result.aborted) throw new Error('the toolchain probe did not finish');
    return readFacts(result.stdout, options.script === undefined ? names : TOOLCHAINS);
  } finally {
    if (options.workdir === undefined) await rm(workdir, { recursive: true, force: true }).catch(() => {});
  }
}

/** A toolchain a repository needs that the sandbox lacks, and how an operator installs it. */
export interface MissingToolchain {
  toolchain: Toolchain;
  /** What asks for it: "go.mod", "pytest tests". */
  because: string;
  /** The Debian command that installs it. */
  install: string;
}

const INSTALL: Record<Toolchain, string> = {
  python: 'apt-get install python3',
  venv: 'apt-get install python3-venv',
  pytest: 'apt-get install python3-pytest',
  node: 'apt-get install nodejs npm',
  npm: 'apt-get install npm',
  pnpm: 'apt-get install pnpm',
  yarn: 'apt-get install yarnpkg',
  go: 'apt-get install golang-go',
  cargo: 'apt-get install cargo',
  java: 'apt-get install default-jdk-headless',
  maven: 'apt-get install maven',
  gradle: 'apt-get install gradle',
  tox: 'apt-get install tox',
  make: 'apt-get install make',
  chromium: 'apt-get install chromium, or set EMEND_CHROMIUM_PATH to a Chromium',
};

/** What a recipe needs from the sandbox, each with the file or fact that asks for it. */
export function needsOf(recipe: TestRecipe): Array<{ toolchain: Toolchain; because: string }> {
  const word = recipe.command.trim().split(/\s+/)[0] ?? '';
  switch (recipe.runner) {
    case 'pytest':
    case 'unittest': {
      const needs: Array<{ toolchain: Toolchain; because: string }> = [
        { toolchain: 'python', because: `${recipe.runner} tests` },
      ];
      if (recipe.runner === 'pytest') needs.push({ toolchain: 'pytest', because: 'pytest tests' });
      if (recipe.setup) needs.push({ toolchain: 'venv', because: 'its Python dependencies (a virtualenv)' });
      return needs;
    }
    case 'node':
      return [
        { toolchain: 'node', because: 'package.json' },
        ...(recipe.node?.browser
          ? [{ toolchain: 'chromium' as const, because: `its tests run in a browser: ${recipe.node.browser.from}` }]
          : []),
        ...(word === 'npm' || recipe.setup?.command.startsWith('npm ')
          ? [{ toolchain: 'npm' as const, because: 'package.json' }]
          : []),
        ...(word === 'pnpm' || word === 'yarn'
          ? [{ toolchain: word as Toolchain, because: recipe.node?.packageManager?.from ?? 'its lockfile' }]
          : []),
      ];
    case 'go':
      return [{ toolchain: 'go', because: 'go.mod' }];
    case 'cargo':
      return [{ toolchain: 'cargo', because: 'Cargo.toml' }];
    case 'maven':
      return [
        { toolchain: 'java', because: 'pom.xml' },
        ...(word === 'mvn' ? [{ toolchain: 'maven' as const, because: 'pom.xml' }] : []),
      ];
    case 'gradle':
      return [
        { toolchain: 'java', because: 'the Gradle build' },
        ...(word === 'gradle' ? [{ toolchain: 'gradle' as const, because: 'the Gradle build (no ./gradlew)' }] : []),
      ];
    case 'tox':
      return [{ toolchain: 'tox', because: 'tox.ini' }];
    case 'make':
      return [{ toolchain: 'make', because: 'the Makefile' }];
    default:
      return [];
  }
}

/**
 * The first toolchain the recipe needs and the sandbox lacks. pytest counts as missing only
 * when the setup cannot install it either (no virtualenv, or no network for setup); the
 * virtualenv only when there is a setup that will run.
 */
export function missingToolchain(
  recipe: TestRecipe,
  facts: ToolchainFacts,
  setupHasNetwork: boolean,
): MissingToolchain | undefined {
  for (const { toolchain, because } of needsOf(recipe)) {
    if (facts[toolchain] !== undefined) continue;
    if (toolchain === 'pytest' && facts.venv !== undefined && setupHasNetwork && recipe.setup) continue;
    if (toolchain === 'venv' && (!setupHasNetwork || (recipe.setup?.onlyFor === 'pytest' && facts.pytest))) continue;
    return { toolchain, because, install: INSTALL[toolchain] };
  }
  return undefined;
}

export function describeMissing(missing: MissingToolchain): string {
  return (
    `this repository needs ${missing.toolchain} (${missing.because}), which the sandbox does not have: ` +
    `install it on the server (${missing.install}); the change could not be validated`
  );
}
