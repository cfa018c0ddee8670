/**
 * Work a step leaves to finish after its result is out, off the task's path: a validation's copies
 * removed, its environment laid ahead for the next one (src/validator/validate.ts, `afterwards`).
 * Each piece runs at once and is kept until it ends, so stopping the process waits for it
 * (`drain`) instead of cutting a removal short. A piece that fails is logged and forgotten: none
 * of it is part of any result.
 */
export class AfterWork {
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly onError: (err: unknown) => void = () => {}) {}

  /** Starts `work`; bound, so it can be handed on as a plain function. */
  readonly add = (work: () => Promise<unknown>): void => {
    const running: Promise<void> = Promise.resolve()
      .then(work)
      .then(
        () => {},
        (err: unknown) => this.onError(err),
      )
      .finally(() => this.pending.delete(running));
    this.pending.add(running);
  };

  /** How many pieces are still running. */
  get size(): number {
    return this.pending.size;
  }

  /** Resolves when every piece has ended, those started while waiting included. */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }
}
