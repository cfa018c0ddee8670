import { availableParallelism, totalmem } from 'node:os';
import type { SandboxReport } from '../sandbox/types.js';

/*
 * When a validation may run its baseline and its change at once (docs/validator.md, "Both trees
 * at once"; the rule is docs/decisions.md's). The sandbox caps a run's memory (its cgroup,
 * EMEND_SANDBOX_MEMORY_MB) and its CPU time, not its cores, so a run counts as one core and as its
 * memory limit. The process counts the test runs of all its validations (as many as
 * EMEND_WORKER_CONCURRENCY carries at once): a validation's own runs always go, one after the
 * other; a second run beside them goes only while the runs in flight, with it, fit the machine's
 * cores and memory. So on a worker whose other slots are busy, validations run as before.
 */

/** What the machine has, and what a run may take of it. */
export interface Machine {
  cores: number;
  memoryBytes: number;
}

export const thisMachine = (): Machine => ({ cores: availableParallelism(), memoryBytes: totalmem() });

export class TestRunSlots {
  private inFlight = 0;
  /** How many runs fit at once: a core each, and each its sandbox's memory limit. */
  readonly capacity: number;

  constructor(
    readonly options: {
      machine: Machine;
      /** The memory one run may take: the sandbox's limit. */
      runMemoryBytes: number;
      /** `off` (EMEND_VALIDATOR_PARALLEL=off): never a second run. */
      mode: 'auto' | 'off';
      /** Whether the sandbox gives each run its own network namespace and /tmp (bubblewrap does; unsafe-host does not). */
      isolated: boolean;
    },
  ) {
    const byMemory = Math.floor(options.machine.memoryBytes / Math.max(1, options.runMemoryBytes));
    this.capacity = Math.max(1, Math.min(options.machine.cores, byMemory));
  }

  /** The slots for the sandbox's limits on this machine. */
  static forSandbox(report: SandboxReport, mode: 'auto' | 'off', machine: Machine = thisMachine()): TestRunSlots {
    return new TestRunSlots({
      machine,
      runMemoryBytes: report.limits.memoryBytes,
      mode,
      isolated: report.kind === 'bubblewrap',
    });
  }

  /** Runs in flight now. */
  get running(): number {
    return this.inFlight;
  }

  /** A validation's own run: counted, never refused. Returns its release. */
  hold(): () => void {
    this.inFlight++;
    return once(() => this.inFlight--);
  }

  /**
   * A run beside the ones in flight, when it fits: its release, or undefined (the caller runs it
   * after the others instead). Never where two runs would share the host's ports and /tmp.
   */
  tryExtra(): (() => void) | undefined {
    if (this.options.mode === 'off' || !this.options.isolated) return undefined;
    if (this.inFlight + 1 > this.capacity) return undefined;
    return this.hold();
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

/**
 * Runs `first` and `second` at once when a run beside the caller's fits (slots.tryExtra), else one
 * after the other, `first` first. Both are waited for before anything is thrown, so neither is
 * still running in a tree the caller is about to remove.
 */
export async function sideBySide<A, B>(
  slots: TestRunSlots | undefined,
  first: () => Promise<A>,
  second: () => Promise<B>,
): Promise<{ results: [A, B]; together: boolean }> {
  const extra = slots?.tryExtra();
  if (!extra) {
    const a = await first();
    return { results: [a, await second()], together: false };
  }
  try {
    const [a, b] = await Promise.allSettled([first(), second()]);
    if (a.status === 'rejected') throw a.reason;
    if (b.status === 'rejected') throw b.reason;
    return { results: [a.value, b.value], together: true };
  } finally {
    extra();
  }
}
