import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { taskLogs, tasks } from '../../src/db/schema.js';
import { PIPELINE, type StepFn, type StepName, type StepRegistry } from '../../src/steps/step.js';
import type { Task } from '../../src/tasks/service.js';
import type { Harness } from './harness.js';

export interface StepCall {
  step: StepName;
  taskId: string;
  retry: number;
  failure?: Record<string, unknown>;
  outputs: Record<string, unknown>;
}

/**
 * Step functions for engine tests: each records its call and returns a small output;
 * `overrides` replaces any of them.
 */
export function recordingSteps(overrides: Partial<Record<StepName, StepFn>> = {}) {
  const calls: StepCall[] = [];
  const make =
    (step: StepName): StepFn =>
    async (payload, helpers) => {
      calls.push({
        step,
        taskId: payload.task.id,
        retry: payload.retry,
        failure: payload.failure,
        outputs: structuredClone(payload.outputs),
      });
      const custom = overrides[step];
      if (custom) return custom(payload, helpers);
      const output: Record<string, unknown> = { step, note: `${step} ran` };
      if (step === 'planner')
        Object.assign(output, { summary: 'change one line', steps: ['edit'], likely_files: ['a.py'] });
      if (step === 'fixer') output.diff = '--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
      if (step === 'validator') return { output: { passed: true }, passed: true, tokens: 0 };
      if (step === 'pr') output.pr_url = `https://github.com/a/b/pull/${calls.length}`;
      return { output, tokens: 100, costUsd: 0.01 };
    };
  const steps = Object.fromEntries(PIPELINE.map((s) => [s, make(s)])) as StepRegistry;
  return { steps, calls };
}

export async function taskRow(h: Harness, id: string): Promise<Task> {
  const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, id));
  return row!;
}

/** Polls the database until the task is in one of `statuses` (or fails after timeoutMs). */
export async function waitForStatus(
  h: Harness,
  id: string,
  statuses: string | string[],
  timeoutMs = 15_000,
): Promise<Task> {
  const wanted = Array.isArray(statuses) ? statuses : [statuses];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const row = await taskRow(h, id);
    if (wanted.includes(row.status)) return row;
    if (Date.now() > deadline) throw new Error(`task ${id} is ${row.status}, expected ${wanted.join(' or ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function logsOf(h: Harness, id: string) {
  const rows = await h.deps.db.select().from(taskLogs).where(eq(taskLogs.taskId, id)).orderBy(taskLogs.id);
  return rows.map((r) => `${r.step}:${r.status}`);
}

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Whether a process runs; a zombie (state Z, waiting to be reaped) runs nothing and counts as dead. */
export function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
