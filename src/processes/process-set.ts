import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

export type TrackedSpawn = (command: string, args: string[], options?: SpawnOptions) => ChildProcess;

/**
 * The processes one task run started. Each child leads its own process group, so a kill
 * ends the child and everything it forked at once.
 */
export class ProcessSet {
  private readonly children = new Set<ChildProcess>();

  readonly spawn: TrackedSpawn = (command, args, options = {}) => {
    const child = spawn(command, args, { ...options, detached: true });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    child.once('error', () => this.children.delete(child));
    return child;
  };

  /** SIGKILLs every process group and resolves when the leaders have exited. */
  async killAll(): Promise<void> {
    const waits = [...this.children].map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
          child.once('exit', () => resolve());
          try {
            process.kill(-child.pid, 'SIGKILL');
          } catch {
            try {
              child.kill('SIGKILL');
            } catch {
              // already gone
            }
          }
        }),
    );
    await Promise.all(waits);
  }
}
