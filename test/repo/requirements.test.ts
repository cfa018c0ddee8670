import { describe, expect, it, vi } from 'vitest';
import type { SandboxReport } from '../../src/sandbox/types.js';
import { MissingRequirementError, available, isCI, need, requirements } from '../support/requirements.js';

const missing = { what: 'the widget', missing: 'not installed', install: 'apt-get install -y widget' };
const present = { what: 'the widget', install: 'apt-get install -y widget' };

/** Stands for vitest's test context: records the note a skip was given. */
class Skipped extends Error {}
const context = () => ({
  skip(note?: string): never {
    throw new Skipped(note);
  },
});

describe('what the suite needs from the host', () => {
  it('knows a CI run by CI, set to anything but empty, 0 or false', () => {
    for (const value of ['true', '1', 'yes', 'TRUE']) expect(isCI({ CI: value })).toBe(true);
    for (const value of [undefined, '', '0', 'false', 'False']) expect(isCI({ CI: value })).toBe(false);
  });

  it('under CI a missing requirement throws, for a file and for a test', () => {
    expect(() => available(missing, { CI: 'true' })).toThrow(MissingRequirementError);
    expect(() => available(missing, { CI: 'true' })).toThrow(
      'CI: the widget is missing: not installed (apt-get install -y widget)',
    );
    expect(() => need(context(), missing, { CI: 'true' })).toThrow(MissingRequirementError);
  });

  it('elsewhere a file is told to skip, with a notice, and a test skips with a note', () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    try {
      expect(available(missing, {})).toBe(false);
      expect(warn).toHaveBeenCalledWith(
        'NOTICE: the widget is missing: not installed (apt-get install -y widget); the tests that need it are skipped',
      );
    } finally {
      warn.mockRestore();
    }
    expect(() => need(context(), missing, {})).toThrow(
      new Skipped('the widget is missing: not installed (apt-get install -y widget)'),
    );
  });

  it('a requirement that is met lets everything run, under CI or not', () => {
    for (const env of [{}, { CI: 'true' }]) {
      expect(available(present, env)).toBe(true);
      expect(() => need(context(), present, env)).not.toThrow();
    }
  });

  it("the sandbox's limits are missing where cgroups are not, with the sandbox's reason", () => {
    const report = {
      kind: 'bubblewrap',
      cgroups: 'none',
      memoryLimit: false,
      processLimit: true,
      notes: ['cannot make cgroups under /sys/fs/cgroup/memory (memory, v1)'],
    } as const;
    const memory = requirements.sandboxLimit(report as unknown as SandboxReport, 'memory');
    expect(memory.missing).toBe(
      'the sandbox cannot make cgroups here: cannot make cgroups under /sys/fs/cgroup/memory (memory, v1)',
    );
    expect(requirements.sandboxLimit(report as unknown as SandboxReport, 'processes').missing).toBeUndefined();
  });
});
