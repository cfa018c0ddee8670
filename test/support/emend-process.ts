import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * A process of the service as users run it, but from source: `node --import tsx <entry>`
 * (src/bin.ts for the `emend` CLI: `serve`, `worker`...), in the repository root, with the
 * environment given and no other (a DATABASE_URL of the test runner must not leak in), and
 * stdout and stderr piped for the caller to read or log.
 */
export function spawnEmend(args: string[], env: NodeJS.ProcessEnv, entry = 'src/bin.ts'): ChildProcess {
  // emend-source: @emend/client resolves to its TypeScript source, as it does for vitest and tsc (no build needed).
  return spawn(process.execPath, ['--conditions=emend-source', '--import', 'tsx', entry, ...args], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
