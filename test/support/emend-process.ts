import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { inject } from 'vitest';
import { BUNDLED_ENTRIES, bundledEntry } from './emend-bundle.js';
import { TEST_NODE_FLAGS } from './node-flags.js';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * How node runs a program of the service from source: the test run's bundle of it when the
 * global setup built one (test/support/emend-bundle.ts), else `--import tsx <entry>`, with
 * @emend/client from its TypeScript source either way. Paths are the repository root's.
 */
export function emendNodeArgs(entry = 'src/bin.ts'): string[] {
  const dir = inject('emendBundle');
  if (dir && (BUNDLED_ENTRIES as readonly string[]).includes(entry)) {
    const file = bundledEntry(dir, entry);
    if (existsSync(file)) return [...TEST_NODE_FLAGS, file];
  }
  const tsx = pathToFileURL(resolve(repoRoot, 'node_modules/tsx/dist/loader.mjs')).href;
  return [...TEST_NODE_FLAGS, '--conditions=emend-source', '--import', tsx, resolve(repoRoot, entry)];
}

/**
 * A process of the service as users run it, but from source (src/bin.ts for the `emend` CLI:
 * `serve`, `worker`...), in the repository root, with the environment given and no other (a
 * DATABASE_URL of the test runner must not leak in), and stdout and stderr piped for the caller
 * to read or log.
 */
export function spawnEmend(args: string[], env: NodeJS.ProcessEnv, entry = 'src/bin.ts'): ChildProcess {
  return spawn(process.execPath, [...emendNodeArgs(entry), ...args], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
