import { createHash, createHmac } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EnvKeyParts, environmentKey } from '../environments/env-key.js';
import type { RunContext } from '../environments/sandboxed.js';

/*
 * What a kept baseline is keyed by (docs/validator.md, "Kept baselines"): everything that decides
 * what the base commit's test run reports, so a key that matches names a run that would report the
 * same. The environment's key (src/environments/env-key.ts: the workspace, the repository, the base
 * commit's manifests, the setup, the workspace's settings and variables, the toolchains, the
 * sandbox) and beside it the commit itself, the command as run, the change's test files copied in,
 * what else the baseline tree took from the checkout, the limits, the test phase's variables, the
 * sandbox's browser, and the code that parsed the output.
 */

/** Bumped when what a key covers or what a record holds changes shape. */
const FORMAT = 1;

/**
 * The store's HMAC secret, derived from the service's secret key (EMEND_SECRET_KEY), which every
 * worker of a deployment shares: so every worker computes the same key for the same baseline, and
 * a key says nothing of the variables' values to a reader of the database.
 */
export function storeSecret(secretKey: Buffer): Buffer {
  return createHmac('sha256', secretKey).update('emend baseline results').digest();
}

/** What a kept baseline is stored under: its key, and what the row says about it in the clear. */
export interface KeptRow {
  key: string;
  workspace: string;
  repository: string;
  commit: string;
  /** The environment's key under the store's secret. */
  envKey: string;
  command: string;
  testFilesDigest?: string;
}

export interface BaselineKeyParts {
  /** The environment's key (environmentKey of src/environments/env-key.ts) under the store's secret. */
  environment: string;
  /** The base commit. */
  commit: string;
  /** The test command as run, flags included. */
  command: string;
  /** The change's test files copied into the baseline (ChangeTests.digest); undefined: none. */
  testFiles?: string;
  /** What the baseline tree took from the checkout beyond the commit's files (extrasDigest); undefined: nothing. */
  extras?: string;
  /** The sandbox's limits and the test timeouts: a tighter limit can fail a run that passed. */
  limits: Record<string, number>;
  /** The test phase's variables (the workspace's, for the repository): values enter as HMACs only. */
  testEnv?: Record<string, string>;
  /** The browser the tests find in the sandbox, if any. */
  browser?: string;
  /** The code that judged the run (codeDigest): another version of the parsers reads the output otherwise. */
  code: string;
}

export function baselineKey(secret: Buffer, parts: BaselineKeyParts): string {
  const mac = (text: string) => createHmac('sha256', secret).update(text).digest('hex');
  const testEnv = Object.entries(parts.testEnv ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => [name, mac(`value\0${name}\0${value}`)]);
  const limits = Object.entries(parts.limits).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return mac(
    JSON.stringify([
      FORMAT,
      parts.environment,
      parts.commit,
      parts.command,
      parts.testFiles ?? null,
      parts.extras ?? null,
      limits,
      testEnv,
      parts.browser ?? null,
      parts.code,
    ]),
  );
}

/** Beyond these, what the baseline took from the checkout is not hashed, and the baseline not kept. */
const EXTRAS_MAX_BYTES = 64 * 1024 * 1024;
const EXTRAS_MAX_ENTRIES = 20_000;

/**
 * The paths the baseline tree took from the checkout beyond the base commit's files (its ignored
 * files and submodules, src/environments/copies.ts), hashed with their contents as they are in the
 * tree: a task's checkout usually has none, but whatever the change left there runs on the base
 * too. Links are hashed as their targets' names, never followed. Undefined when there is nothing;
 * `too large` beyond 64 MiB or 20,000 entries, which a kept baseline is not worth reading.
 */
export async function extrasDigest(root: string, paths: string[]): Promise<string | 'too large' | undefined> {
  if (paths.length === 0) return undefined;
  const hash = createHash('sha256');
  let bytes = 0;
  let entries = 0;
  const walk = async (path: string): Promise<boolean> => {
    if (++entries > EXTRAS_MAX_ENTRIES) return false;
    const full = join(root, path);
    const st = await lstat(full).catch(() => undefined);
    if (!st) {
      hash.update(`${path}\0-\0`);
      return true;
    }
    if (st.isSymbolicLink()) {
      hash.update(`${path}\0l\0${await readlink(full)}\0`);
      return true;
    }
    if (st.isDirectory()) {
      hash.update(`${path}\0d\0`);
      const names = (await readdir(full)).sort();
      for (const name of names) if (!(await walk(`${path}/${name}`))) return false;
      return true;
    }
    if (!st.isFile()) {
      hash.update(`${path}\0o\0`);
      return true;
    }
    bytes += st.size;
    if (bytes > EXTRAS_MAX_BYTES) return false;
    hash.update(`${path}\0f${st.mode & 0o111 ? 'x' : ''}\0`).update(await readFile(full));
    hash.update('\0');
    return true;
  };
  for (const path of [...paths].sort()) if (!(await walk(path))) return 'too large';
  return hash.digest('hex');
}

let code: string | undefined;

/**
 * The code that turns a run's output into results: the files of src/test-runs (the parsers, the
 * run's judging) and of this folder (which tests belong to the change's files), hashed once per
 * process. A service upgraded to other parsers does not read a run its predecessor parsed.
 */
export function codeDigest(): string {
  if (code !== undefined) return code;
  const here = dirname(fileURLToPath(import.meta.url));
  const hash = createHash('sha256');
  for (const dir of [join(here, '..', 'test-runs'), here]) {
    for (const name of readdirSync(dir).sort()) {
      if (!/\.(ts|js)$/.test(name)) continue;
      hash
        .update(`${name}\0`)
        .update(readFileSync(join(dir, name)))
        .update('\0');
    }
  }
  code = hash.digest('hex');
  return code;
}

/** The row a validation's kept baseline is stored under: its key (above) and what the row says in the clear. */
export function keptRowFor(
  store: { secret: Buffer; scope: { workspace: string; repository: string } },
  envParts: EnvKeyParts,
  k: { ctx: RunContext; commit: string; command: string; tests: { digest?: string }; extras: string | undefined },
): KeptRow {
  const report = k.ctx.sandbox.report();
  const envKey = environmentKey(store.secret, envParts);
  // The sandbox's command timeout is the default the run's own (below) came from.
  const { timeoutMs: _, ...sandboxLimits } = report.limits;
  const key = baselineKey(store.secret, {
    environment: envKey,
    commit: k.commit,
    command: k.command,
    testFiles: k.tests.digest,
    extras: k.extras,
    limits: { ...sandboxLimits, runTimeoutMs: k.ctx.limits.runTimeoutMs, testTimeoutMs: k.ctx.limits.testTimeoutMs },
    testEnv: k.ctx.testEnv,
    browser: report.browser,
    code: codeDigest(),
  });
  return {
    key,
    ...store.scope,
    commit: k.commit,
    envKey,
    command: k.command,
    ...(k.tests.digest !== undefined ? { testFilesDigest: k.tests.digest } : {}),
  };
}
