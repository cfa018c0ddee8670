// One redaction for every text the service lets out; the model client uses the same.
import { REDACTED, redact } from '../text/redact.js';

/**
 * The setup's output as the validator's log records while it runs (a task's log, and so its SSE
 * stream): whole lines only, at most one record per interval, each clipped, and every value of
 * the setup-only variables replaced by `[redacted]` before anything leaves.
 */
export interface SetupOutputOptions {
  /** Values never to show (ctx.setupEnv's: the workspace's setup secrets). Shorter than 4 characters are not looked for. */
  secrets: string[];
  /** Least time between two records (default 1 s). */
  intervalMs?: number;
  /** Largest text of one record; the lines before are left out, and counted (default 4,000). */
  maxChars?: number;
}

export { REDACTED, redact };

export function setupOutputLog(
  log: (message: string, data?: Record<string, unknown>) => void,
  options: SetupOutputOptions,
): { push(chunk: Buffer): void; flush(): void } {
  const interval = options.intervalMs ?? 1000;
  const maxChars = options.maxChars ?? 4000;
  // Longest first, so a secret containing another is replaced whole.
  const secrets = [...new Set(options.secrets)].sort((a, b) => b.length - a.length);
  let partial = '';
  let lines: string[] = [];
  let timer: NodeJS.Timeout | undefined;

  const emit = () => {
    timer = undefined;
    if (lines.length === 0) return;
    let text = redact(lines.join('\n'), secrets);
    const count = lines.length;
    lines = [];
    if (text.length > maxChars) text = `…${text.slice(-maxChars)}`;
    log('setup output', { text, lines: count });
  };

  return {
    push(chunk) {
      const text = partial + chunk.toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      // A line without an end for too long (a progress bar) is sent as it is.
      if (partial.length > maxChars) {
        parts.push(partial);
        partial = '';
      }
      lines.push(...parts);
      if (lines.length > 0 && timer === undefined) {
        timer = setTimeout(emit, interval);
        timer.unref();
      }
    },
    flush() {
      if (timer) clearTimeout(timer);
      if (partial !== '') lines.push(partial);
      partial = '';
      emit();
    },
  };
}
