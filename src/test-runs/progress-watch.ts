import { z } from 'zod';

/** What starts every line of the progress plugin (src/test-runs/pytest-progress.ts). */
export const PROGRESS_PREFIX = 'emend-progress ';

const Event = z.discriminatedUnion('event', [
  z.object({ event: z.literal('collected'), count: z.number().int().nonnegative() }),
  z.object({ event: z.literal('start'), id: z.string() }),
  z.object({ event: z.literal('finish'), id: z.string() }),
]);

/** Runs `fn` after `ms`; returns what cancels it. Injected so the watch can be tested without waiting. */
export type Schedule = (ms: number, fn: () => void) => () => void;

const realSchedule: Schedule = (ms, fn) => {
  const timer = setTimeout(fn, ms);
  return () => clearTimeout(timer);
};

/** A line longer than this without a newline is not ours: dropped rather than kept growing. */
const MAX_LINE = 64 * 1024;

export interface ProgressWatchOptions {
  /** How long one test may run, from its start event to its finish event, before `onHang`. */
  limitMs: number;
  /** Called once, with the test's id, when one runs past the limit; the caller stops the run. */
  onHang: (id: string) => void;
  schedule?: Schedule;
}

/**
 * Follows the progress stream of a test run as it arrives: which tests started, which
 * finished, how many were collected. A test that starts and does not finish within the
 * limit is the hung one; the watch reports it once and then ignores the rest of the stream
 * (the caller kills the run). Lines that are not progress events are ignored.
 */
export class ProgressWatch {
  private buffer = '';
  private readonly running = new Map<string, () => void>();
  private finishedCount = 0;
  private collectedCount: number | undefined;
  private hungId: string | undefined;
  private stopped = false;
  private readonly schedule: Schedule;

  constructor(private readonly options: ProgressWatchOptions) {
    this.schedule = options.schedule ?? realSchedule;
  }

  push(chunk: Buffer | string): void {
    if (this.stopped) return;
    this.buffer += chunk.toString();
    for (let newline = this.buffer.indexOf('\n'); newline >= 0; newline = this.buffer.indexOf('\n')) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      this.line(line);
    }
    if (this.buffer.length > MAX_LINE) this.buffer = '';
  }

  /** The test that ran past the limit, if one did. */
  get hung(): string | undefined {
    return this.hungId;
  }

  /** How many tests the run collected, when it said. */
  get collected(): number | undefined {
    return this.collectedCount;
  }

  get finished(): number {
    return this.finishedCount;
  }

  /** Tests collected that neither finished nor hung: those a stopped run never reached. */
  get notRun(): number | undefined {
    if (this.collectedCount === undefined) return undefined;
    return Math.max(
      0,
      this.collectedCount - this.finishedCount - this.running.size - (this.hungId === undefined ? 0 : 1),
    );
  }

  /** Cancels every timer; nothing more is reported. */
  stop(): void {
    this.stopped = true;
    for (const cancel of this.running.values()) cancel();
    this.running.clear();
  }

  private line(text: string): void {
    if (!text.startsWith(PROGRESS_PREFIX)) return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text.slice(PROGRESS_PREFIX.length));
    } catch {
      return;
    }
    const event = Event.safeParse(parsed);
    if (!event.success) return;
    const e = event.data;
    if (e.event === 'collected') {
      this.collectedCount = e.count;
    } else if (e.event === 'start') {
      this.running.get(e.id)?.();
      this.running.set(
        e.id,
        this.schedule(this.options.limitMs, () => this.hang(e.id)),
      );
    } else {
      const cancel = this.running.get(e.id);
      if (cancel === undefined) return;
      cancel();
      this.running.delete(e.id);
      this.finishedCount++;
    }
  }

  private hang(id: string): void {
    if (this.stopped || this.hungId !== undefined) return;
    this.hungId = id;
    this.running.delete(id);
    this.stop();
    this.options.onHang(id);
  }
}

/** The output without the progress lines (they arrive on the stream the test output does not use). */
export function withoutProgress(text: string): string {
  if (!text.includes(PROGRESS_PREFIX)) return text;
  return text
    .split('\n')
    .filter((line) => !line.startsWith(PROGRESS_PREFIX))
    .join('\n');
}
