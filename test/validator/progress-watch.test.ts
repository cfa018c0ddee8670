import { describe, expect, it } from 'vitest';
import { PROGRESS_PREFIX, ProgressWatch, type Schedule, withoutProgress } from '../../src/test-runs/progress-watch.js';
import { namesProgressPlugin, withoutProgressPlugin } from '../../src/test-runs/pytest-progress.js';

/** Timers the test fires by hand: what is pending, and at which delay. */
function manualSchedule() {
  const pending = new Map<number, { ms: number; fn: () => void }>();
  let next = 0;
  const schedule: Schedule = (ms, fn) => {
    const id = next++;
    pending.set(id, { ms, fn });
    return () => pending.delete(id);
  };
  const fireAll = () => {
    for (const [id, timer] of [...pending]) {
      pending.delete(id);
      timer.fn();
    }
  };
  return { schedule, pending, fireAll };
}

const line = (event: Record<string, unknown>) => `${PROGRESS_PREFIX}${JSON.stringify(event)}\n`;

describe('the pytest progress watch', () => {
  it('times each test from its start to its finish, and reports the one that runs past the limit once', () => {
    const timers = manualSchedule();
    const hung: string[] = [];
    const watch = new ProgressWatch({ limitMs: 6_000, onHang: (id) => hung.push(id), schedule: timers.schedule });
    watch.push(line({ event: 'collected', count: 5 }));
    watch.push(line({ event: 'start', id: 't.py::a' }));
    expect([...timers.pending.values()].map((t) => t.ms)).toEqual([6_000]);
    watch.push(line({ event: 'finish', id: 't.py::a' }));
    expect(timers.pending.size).toBe(0);
    watch.push(line({ event: 'start', id: 't.py::b[x y]' }));
    timers.fireAll();
    expect(hung).toEqual(['t.py::b[x y]']);
    expect(watch.hung).toBe('t.py::b[x y]');
    expect(watch.finished).toBe(1);
    // five collected: a finished, b hung, three never reached
    expect(watch.notRun).toBe(3);
    // once stopped, the rest of the stream changes nothing
    watch.push(line({ event: 'finish', id: 't.py::b[x y]' }));
    watch.push(line({ event: 'start', id: 't.py::c' }));
    expect(timers.pending.size).toBe(0);
    expect(hung).toHaveLength(1);
  });

  it('reads lines split across chunks and ignores whatever is not a progress event', () => {
    const timers = manualSchedule();
    const watch = new ProgressWatch({ limitMs: 1_000, onHang: () => {}, schedule: timers.schedule });
    const start = line({ event: 'start', id: 'test_x.py::test_one' });
    watch.push(Buffer.from(start.slice(0, 20)));
    expect(timers.pending.size).toBe(0);
    watch.push(Buffer.from(start.slice(20)));
    expect(timers.pending.size).toBe(1);
    for (const noise of [
      'bwrap: something\n',
      `${PROGRESS_PREFIX}{not json\n`,
      line({ event: 'start' }),
      line({ event: 'collected', count: -1 }),
      line({ event: 'finish', id: 'never started' }),
    ]) {
      watch.push(noise);
    }
    expect(timers.pending.size).toBe(1);
    expect(watch.collected).toBeUndefined();
    expect(watch.notRun).toBeUndefined();
    watch.push(line({ event: 'finish', id: 'test_x.py::test_one' }));
    expect(watch.finished).toBe(1);
    expect(watch.hung).toBeUndefined();
  });

  it('drops an endless line instead of keeping it, and stop() cancels the timers', () => {
    const timers = manualSchedule();
    const watch = new ProgressWatch({ limitMs: 1_000, onHang: () => {}, schedule: timers.schedule });
    watch.push('x'.repeat(100 * 1024));
    watch.push(line({ event: 'start', id: 'a' }));
    expect(timers.pending.size).toBe(1);
    watch.stop();
    expect(timers.pending.size).toBe(0);
  });

  it('takes the progress lines out of an output and leaves the rest as it was', () => {
    expect(
      withoutProgress(`bwrap: warning\n${line({ event: 'start', id: 'a' })}${line({ event: 'finish', id: 'a' })}`),
    ).toBe('bwrap: warning\n');
    expect(withoutProgress('plain\noutput\n')).toBe('plain\noutput\n');
  });

  it('tells a command that loads the plugin, and can take the plugin out of it', () => {
    const command = 'python3 -m pytest -v -rA -p no:cacheprovider -p emend_progress -o faulthandler_timeout=60';
    expect(namesProgressPlugin(command)).toBe(true);
    expect(withoutProgressPlugin(command)).toBe(
      'python3 -m pytest -v -rA -p no:cacheprovider -o faulthandler_timeout=60',
    );
    expect(namesProgressPlugin('python3 -m pytest -p emend_progress_other')).toBe(false);
    expect(namesProgressPlugin('make test')).toBe(false);
  });
});
