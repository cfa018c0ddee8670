import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Tests that read the wall clock pass at the time they were written and may fail years later:
 * dayjs's time-zone tests guess an offset from today's (a date in winter answers otherwise than
 * one in summer), a certificate fixture expires, "in 3 days" crosses a month that no longer
 * exists. A benchmark's instances are old commits whose expected results were taken near their
 * date, so `emend eval` runs their tests with the clock at the base commit's date, as their CI
 * did, through libfaketime (LD_PRELOAD; Debian's `faketime` package). The clock is set back by an
 * offset, not to a fixed time, so it still runs (timeouts, durations) and a test script's own TZ
 * still applies; monotonic clocks are left alone, and child processes share the parent's offset.
 * The test phase only: setup talks to the registries over TLS, whose certificates are checked
 * against the real date.
 */

/** Where Debian's libfaketime is: /usr/lib/<multiarch triplet>/faketime/libfaketime.so.1. */
export function findFaketime(root = '/usr/lib'): string | undefined {
  let dirs: string[];
  try {
    dirs = readdirSync(root);
  } catch {
    return undefined;
  }
  for (const dir of ['', ...dirs]) {
    const lib = join(root, dir, 'faketime', 'libfaketime.so.1');
    if (existsSync(lib)) return lib;
  }
  return undefined;
}

/**
 * The variables that run a test command at `at`: the clock set back by the seconds from `at` to
 * `now` (never forward: a commit dated in the future, a wrong clock on its author's machine,
 * runs at today's date).
 */
export function clockEnv(lib: string, at: Date, now: Date): Record<string, string> {
  const behind = Math.max(0, Math.round((now.getTime() - at.getTime()) / 1000));
  return {
    LD_PRELOAD: lib,
    FAKETIME: `-${behind}`,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
    FAKETIME_DONT_RESET: '1',
  };
}
