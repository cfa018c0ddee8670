import type { BillingPlan } from '../billing/billing-plan.js';
import { type TaskCheckout, attemptCheckout } from '../checkout/checkout.js';
import type { Deps } from '../deps.js';
import type { TrackedSpawn } from '../processes/process-set.js';
import { type Progress, isModelStep } from '../step-contract/index.js';
import type { AttemptHelpers } from '../steps/step.js';
import type { Task } from '../tasks/service.js';
import type { stepModel } from './step-model.js';

/** What an attempt takes from its step's run (the step loop, src/engine/step-loop.ts). */
export interface AttemptLoop {
  deps: Deps;
  task: Task;
  progress: Progress;
  signal: AbortSignal;
  spawn: TrackedSpawn;
  limits: BillingPlan;
  checkout(): Promise<TaskCheckout>;
  store: { report(record: { step: string; output: Record<string, unknown> }): Promise<void> };
}

/**
 * One attempt's helpers (docs/agent.md, "Attempts"): the step's, but with a tree of its own (a
 * copy of the task's checkout at the base commit, made on first use and removed when the step
 * ends), a model of its own at the given temperature whose calls count as the step's, and its
 * records tagged with its number.
 */
export function attemptHelpers(
  loop: AttemptLoop,
  step: string,
  model: ReturnType<typeof stepModel>,
  trees: AttemptTrees,
  n: number,
  options: { temperature?: number },
): AttemptHelpers {
  const { deps } = loop;
  const temperature = options.temperature ?? (isModelStep(step) ? deps.config.llm.temperatures[step] : 0);
  const own = model.attempt(temperature);
  return {
    deps,
    signal: loop.signal,
    spawn: loop.spawn,
    log: (message, data) => deps.log.debug({ task: loop.task.id, step, attempt: n, ...data }, message),
    report: (output) => loop.store.report({ step, output: { attempt: n, ...output } }),
    model: own.client,
    limits: loop.limits,
    checkout: () => trees.open(n),
    attempt: () => {
      throw new Error('an attempt has no attempts of its own');
    },
    spent: () => ({ tokens: own.meter.tokens, costUsd: loop.task.byok ? 0 : own.meter.costUsd }),
  };
}

/** The attempts' trees of one step's run: made from the task's checkout on first use, all removed when the step ends. */
export class AttemptTrees {
  private readonly trees = new Map<number, Promise<TaskCheckout>>();

  constructor(private readonly loop: AttemptLoop) {}

  open(n: number): Promise<TaskCheckout> {
    let tree = this.trees.get(n);
    if (!tree) {
      const { deps, spawn, signal } = this.loop;
      tree = this.loop.checkout().then(async (main) => {
        this.loop.progress.baseCommit ??= main.baseCommit;
        return attemptCheckout({ dataDir: deps.config.dataDir, log: deps.log, spawn }, main, n, signal);
      });
      this.trees.set(n, tree);
    }
    return tree;
  }

  /** Removes every tree made; one that will not go is left to the task's checkout, which holds it. */
  async dispose(): Promise<void> {
    const made = [...this.trees.values()];
    this.trees.clear();
    await Promise.all(
      made.map(async (t) =>
        (await t.catch(() => undefined))
          ?.dispose()
          .catch((err: unknown) => this.loop.deps.log.warn({ err, task: this.loop.task.id }, 'an attempt tree stayed')),
      ),
    );
  }
}
