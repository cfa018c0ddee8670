import { STEP_NAMES } from '../src/step-contract/index.js';
import type { RegistryStep, StepRegistry } from '../src/steps/step.js';
import type { WorkerOptions } from '../src/engine/worker.js';

/**
 * Steps that do nothing: what is left is the engine (queue, claims, logs, NOTIFY, settle).
 * `return`: each step returns at once, so on PGlite (whose queries run on this thread and
 * resolve without a turn of the event loop) a whole run is one unbroken chain of promises.
 * `yield`: each step first waits for one turn of the event loop, as any real step does
 * (it calls a model or a command), and returns nothing more.
 */
export function noopSteps(kind: 'return' | 'yield' = 'return'): StepRegistry {
  const noop: RegistryStep =
    kind === 'return'
      ? async () => ({ output: {} })
      : async () => {
          await new Promise((resolve) => setImmediate(resolve));
          return { output: {} };
        };
  return Object.fromEntries(STEP_NAMES.map((s) => [s, noop])) as StepRegistry;
}

/** The production defaults (src/engine/worker.ts), written out so the figures say what ran. */
export const BENCH_WORKER_OPTIONS: WorkerOptions = {
  concurrency: 2,
  heartbeatMs: 5000,
  staleMs: 30_000,
  maintenanceMs: 5000,
  webhookConcurrency: 4,
  // The service's is 25 s; the bench stops its workers only once their runs are over.
  stopGraceMs: 0,
};
