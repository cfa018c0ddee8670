import { ProcessSet } from './process-set.js';

interface Run {
  controller: AbortController;
  processes: ProcessSet;
}

/**
 * The task runs in progress in this process, so a kill arriving here (from the API in the
 * same process, a NOTIFY, or the heartbeat noticing the status) can abort the run and end
 * its processes before answering.
 */
export class LocalRuns {
  private readonly runs = new Map<string, Run>();

  start(taskId: string): Run {
    const run = { controller: new AbortController(), processes: new ProcessSet() };
    this.runs.set(taskId, run);
    return run;
  }

  finish(taskId: string, run: Run) {
    if (this.runs.get(taskId) === run) this.runs.delete(taskId);
  }

  has(taskId: string): boolean {
    return this.runs.has(taskId);
  }

  ids(): string[] {
    return [...this.runs.keys()];
  }

  /** Aborts the run (model calls, steps) and kills its processes; false when it does not run here. */
  async abort(taskId: string, reason = 'killed'): Promise<boolean> {
    const run = this.runs.get(taskId);
    if (!run) return false;
    run.controller.abort(new Error(reason));
    await run.processes.killAll();
    return true;
  }

  async abortAll(reason: string): Promise<void> {
    await Promise.all(this.ids().map((id) => this.abort(id, reason)));
  }
}
