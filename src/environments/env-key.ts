import { createHash, createHmac } from 'node:crypto';
import { basename } from 'node:path';
import { ConfinedDir } from '../checkout/confined-fs.js';

/**
 * What decides an environment (docs/environments.md, "Cached environments"): the files that say
 * what setup installs. Any of them changing in the base commit makes a new environment.
 */
const MANIFEST_NAMES = new Set([
  'package.json',
  'package-lock.json',
  'npm-shrinkwrap.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'pnpm-workspace.yaml',
  '.yarnrc.yml',
  '.yarnrc',
  '.npmrc',
  'bun.lockb',
  'pyproject.toml',
  'setup.cfg',
  'setup.py',
  'tox.ini',
  'Pipfile',
  'Pipfile.lock',
  'poetry.lock',
  'uv.lock',
  'pip.conf',
  'go.mod',
  'go.sum',
  'Cargo.toml',
  'Cargo.lock',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'gradle.properties',
  '.nvmrc',
  '.node-version',
  '.python-version',
  '.tool-versions',
]);

/** `.emend/setup` is the repository's setup script: part of what decides the environment. */
const SETUP_SCRIPT = '.emend/setup';

/** A manifest is small; anything larger counts by its kind (too-large), not its contents. */
const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

/** Whether a repository path names a manifest, a lockfile or the setup script. */
export function isManifest(path: string): boolean {
  if (path === SETUP_SCRIPT) return true;
  const name = basename(path);
  return MANIFEST_NAMES.has(name) || /^requirements.*\.txt$/.test(name) || /.*requirements\.txt$/.test(name);
}

/**
 * The manifests among the base commit's tracked paths, hashed with their contents as read in
 * the base tree through the confined file module (a manifest that is a link out of the tree,
 * or not a regular file, counts as absent). node_modules and vendored trees are left out.
 */
export function manifestDigest(baseRepo: string, tracked: Iterable<string>): string {
  const dir = new ConfinedDir(baseRepo, { exclude: ['.git'] });
  const hash = createHash('sha256');
  const paths = [...tracked].filter((p) => isManifest(p) && !/(^|\/)node_modules\//.test(p)).sort();
  for (const path of paths) {
    const read = dir.read(path, { maxBytes: MAX_MANIFEST_BYTES });
    hash.update(`${path}\0`);
    hash.update(read.ok ? read.bytes : `<${read.info.kind}>`);
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Everything an environment is keyed by. Secrets come in as values and leave only as an HMAC. */
export interface EnvKeyParts {
  /** Whose environment: the workspace id (`local` for `emend validate`). */
  workspace: string;
  /** The repository: its URL for a task, the checkout's path for `emend validate`. */
  repository: string;
  /** manifestDigest of the base commit. */
  manifests: string;
  /** The setup as it runs: the detected install, `.emend/setup`, the workspace's setup setting. */
  setup: string[];
  /** The workspace's settings for the repository, whatever they hold. */
  settings?: unknown;
  /** The setup-only variables (the workspace's setup secrets, an operator's index). */
  setupEnv?: Record<string, string>;
  /** Toolchain versions (the sandbox's probe and what was fetched) and the roots bound. */
  toolchains: Record<string, string | undefined>;
  toolRoots: string[];
  /** How setup reaches the network, and the sandbox kind: an offline install differs. */
  sandbox: string;
}

/** Bumped when what an entry holds changes shape. */
const FORMAT = 1;

/** JSON with object keys sorted, so equal parts give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The entry's key: an HMAC, under the cache's own secret, of every part. The setup variables'
 * values enter only as their own HMAC, so neither the key nor the entry's metadata holds or
 * reveals a secret, and a guess at a low-entropy secret cannot be checked against the key
 * without the cache's secret.
 */
export function environmentKey(secret: Buffer, parts: EnvKeyParts): string {
  const mac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
  const setupEnv = Object.fromEntries(
    Object.entries(parts.setupEnv ?? {}).map(([name, value]) => [name, mac(`value\0${name}\0${value}`)]),
  );
  const settings = parts.settings === undefined ? undefined : mac(`settings\0${canonical(parts.settings)}`);
  // The workspace enters under its first name, `account`, so keys made before the rename still hit.
  const { workspace, ...rest } = parts;
  return mac(canonical({ ...rest, account: workspace, format: FORMAT, setupEnv, settings })).slice(0, 40);
}
