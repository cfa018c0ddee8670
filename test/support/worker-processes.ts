import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { servePgliteOnSocket } from '../../src/db/pglite-socket.js';
import { spawnEmend } from './emend-process.js';
import type { Harness } from './harness.js';
import { postgresUrlOf } from './test-db.js';

/**
 * Worker processes on the test's own database: PostgreSQL by URL, or the in-memory PGlite
 * served on a Unix socket exactly as `emend serve` serves its data dir.
 */
export async function workerProcesses(h: Harness) {
  const dir = mkdtempSync(join(tmpdir(), 'emend-workers-'));
  const trace = join(dir, 'trace.log');
  writeFileSync(trace, '');
  const socket = h.database.pglite
    ? await servePgliteOnSocket(h.database.pglite, join(dir, '.s.PGSQL.5432'))
    : undefined;
  const dbEnv: Record<string, string> = socket
    ? { EMEND_TEST_SOCKET_DIR: dir }
    : { DATABASE_URL: postgresUrlOf(h.database)! };
  const children: ChildProcess[] = [];

  return {
    trace,
    /** Lines "<pid> <task> <step>", one per step call, in order. */
    calls: () =>
      readFileSync(trace, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => {
          const [pid, task, step, extra] = l.split(' ');
          return { pid: Number(pid), task: task!, step: step!, extra };
        }),
    async start(env: Record<string, string> = {}): Promise<ChildProcess> {
      const processEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...dbEnv, STEP_TRACE: trace, ...env };
      const child = spawnEmend([], processEnv, 'test/support/worker-process.ts');
      children.push(child);
      let stderr = '';
      child.stderr!.on('data', (b) => (stderr += String(b)));
      await new Promise<void>((resolve, reject) => {
        child.stdout!.on('data', (b) => {
          if (String(b).includes('worker ready')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`worker exited (${code}) before it was ready: ${stderr}`)));
      });
      return child;
    },
    async kill(child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill(signal);
      await exited;
    },
    async close() {
      await Promise.all(children.map((c) => this.kill(c)));
      await socket?.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
