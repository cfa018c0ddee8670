import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LoadJob, LoadResult } from './load-worker.js';

export type { LoadJob, LoadResult };

type Reply = { ready: true } | { id: number; result: LoadResult } | { id: number; error: string };

/**
 * autocannon in a child process: the load generator gets its own event loop and its own
 * CPU accounting, so the benchmark's process.cpuUsage() is the servers' (and PGlite's) alone.
 */
export class LoadGenerator {
  private readonly child: ChildProcess;
  private readonly ready: Promise<void>;
  private seq = 0;
  private readonly waiting = new Map<number, { resolve: (r: LoadResult) => void; reject: (e: Error) => void }>();

  constructor() {
    // fork() passes this process's execArgv on, so tsx's loader runs the TypeScript file there too.
    this.child = fork(fileURLToPath(new URL('./load-worker.ts', import.meta.url)), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.ready = new Promise((resolve, reject) => {
      this.child.on('message', (reply: Reply) => {
        if ('ready' in reply) return resolve();
        const waiter = this.waiting.get(reply.id);
        this.waiting.delete(reply.id);
        if ('error' in reply) waiter?.reject(new Error(reply.error));
        else waiter?.resolve(reply.result);
      });
      this.child.on('exit', (code, signal) => {
        const err = new Error(`the load generator exited (code ${code}, signal ${signal})`);
        reject(err);
        for (const w of this.waiting.values()) w.reject(err);
        this.waiting.clear();
      });
    });
  }

  async run(job: LoadJob): Promise<LoadResult> {
    await this.ready;
    const id = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.child.send({ id, job });
    });
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.disconnect();
    await exited;
  }
}
