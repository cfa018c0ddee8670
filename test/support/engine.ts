import { readFileSync } from 'node:fs';
import { eq } from 'drizzle-orm';
import { afterEach, expect } from 'vitest';
import { type Clock, systemClock } from '../../src/clock.js';
import { taskLogs, tasks } from '../../src/db/schema.js';
import { type Worker, type WorkerOptions, startWorker } from '../../src/engine/worker.js';
import { newId } from '../../src/ids.js';
import type { StepName } from '../../src/step-contract/index.js';
import type { RegistryStep, StepRegistry } from '../../src/steps/step.js';
import type { Task } from '../../src/tasks/service.js';
import type { Harness } from './harness.js';
import { fixerOutput, plannerOutput, prOutput, validatorOutput } from './step-outputs.js';

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
export function recordingSteps(overrides: Partial<Record<StepName, RegistryStep>> = {}) {
  const calls: StepCall[] = [];
  const make =
    (step: StepName): RegistryStep =>
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
      const ran = { step, note: `${step} ran` };
      if (step === 'planner') return { output: { ...ran, ...plannerOutput() }, tokens: 100, costUsd: 0.01 };
      if (step === 'fixer') {
        const diff = '--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
        const output = { ...ran, ...fixerOutput(diff) };
        return { output, patch: { changed: true, diffSummary: diff }, tokens: 100, costUsd: 0.01 };
      }
      if (step === 'validator') return { output: validatorOutput(), patch: { passed: true }, tokens: 0 };
      if (step === 'pr') {
        const url = `https://github.com/a/b/pull/${calls.length}`;
        return { output: { ...ran, ...prOutput(url) }, patch: { prUrl: url }, tokens: 100, costUsd: 0.01 };
      }
      return { output: ran, tokens: 100, costUsd: 0.01 };
    };
  const steps: StepRegistry = {
    planner: make('planner'),
    locator: make('locator'),
    inspector: make('inspector'),
    fixer: make('fixer'),
    validator: make('validator'),
    pr: make('pr'),
  };
  return { steps, calls };
}

/**
 * The worker timings of engine tests: a heartbeat quick enough that a test sees it, a stale limit a
 * test can outwait, and no maintenance round of its own during a test.
 */
export const TEST_WORKER_TIMINGS = { heartbeatMs: 200, staleMs: 2_000, maintenanceMs: 60_000 } as const;

/**
 * A worker per test, for a file whose tests each start their own: start() runs it on the
 * harness (the test timings unless `options` says otherwise), and it is stopped after the test,
 * passed or failed, so no worker takes up the next test's tasks.
 */
export function workerPerTest(harness: () => Harness) {
  let worker: Worker | undefined;
  afterEach(async () => {
    await worker?.stop();
    worker = undefined;
  });
  return {
    async start(steps: StepRegistry, options: Partial<WorkerOptions> = {}): Promise<Worker> {
      worker = await startWorker(harness().deps, steps, { ...TEST_WORKER_TIMINGS, ...options });
      return worker;
    },
    /** The worker this test started, if it started one. */
    get current(): Worker | undefined {
      return worker;
    },
  };
}

/** The repository tasks are created on unless a test names another: the harness's code host must have it. */
export const REQUESTS_REPO = 'https://github.com/psf/requests';

/**
 * Creates a task through the API as `auth` and answers its id (201 asserted, the body in the
 * message otherwise): 'fix the bug' on REQUESTS_REPO, with `body` over those.
 */
export async function createTask(
  h: Harness,
  auth: Record<string, string>,
  body: Record<string, unknown> = {},
): Promise<string> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: auth,
    payload: { prompt: 'fix the bug', repo_url: REQUESTS_REPO, ...body },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

/** POST /v1/tasks/:id/approve as `auth` with `body` (the stage, and a plan to run instead); answers the response. */
export function approveGate(
  h: Harness,
  auth: Record<string, string>,
  id: string,
  body: { stage: string; plan?: Record<string, unknown> },
) {
  return h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/approve`, headers: auth, payload: body });
}

/**
 * A task row written directly, with no job in the queue: a task whose job was lost, which no
 * worker runs unless something queues it again. A pending preview fix, 'fix the bug', created
 * now, with `fields` over those.
 */
export async function insertJoblessTask(
  h: Harness,
  accountId: string,
  fields: Partial<typeof tasks.$inferInsert> = {},
): Promise<string> {
  const id = newId();
  await h.deps.db.insert(tasks).values({
    id,
    workspaceId: accountId,
    taskType: 'fix',
    mode: 'preview',
    status: 'pending',
    prompt: 'fix the bug',
    createdAt: h.clock.now(),
    ...fields,
  });
  return id;
}

export async function taskRow(h: Harness, id: string): Promise<Task> {
  const [row] = await h.deps.db.select().from(tasks).where(eq(tasks.id, id));
  return row!;
}

/**
 * How the wait helpers below keep time: a clock for the deadline and a pause between probes.
 * They wait for real work (workers, git, the sandbox), so by default the system clock and a real
 * timer; they never read or move the harness's manual clock (h.clock), which is the service's
 * time and the test's to set. A test of the helpers themselves passes a manual clock whose pause
 * advances it, and times out without sleeping (test/support/engine-wait.test.ts).
 */
export interface Polling {
  clock: Clock;
  pause(ms: number): Promise<void>;
}

export const realPolling: Polling = {
  clock: systemClock,
  pause: (ms) => new Promise((r) => setTimeout(r, ms)),
};

const PROBE_EVERY_MS = 20;

/** Polls the database until the task is in one of `statuses` (or fails after timeoutMs). */
export async function waitForStatus(
  h: Harness,
  id: string,
  statuses: string | string[],
  timeoutMs = 15_000,
  polling: Polling = realPolling,
): Promise<Task> {
  const wanted = Array.isArray(statuses) ? statuses : [statuses];
  let last = '';
  try {
    return await waitFor(
      `task ${id} to be ${wanted.join(' or ')}`,
      async () => {
        const row = await taskRow(h, id);
        last = row.status;
        return wanted.includes(row.status) && row;
      },
      timeoutMs,
      polling,
    );
  } catch {
    throw new Error(`task ${id} is ${last}, expected ${wanted.join(' or ')}`);
  }
}

/** Probes until it answers something truthy, which it returns; fails after timeoutMs of `polling`'s clock. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  polling: Polling = realPolling,
): Promise<T> {
  const deadline = polling.clock.now().getTime() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (polling.clock.now().getTime() > deadline) throw new Error(`timed out waiting for ${what}`);
    await polling.pause(PROBE_EVERY_MS);
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
