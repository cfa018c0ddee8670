import { describe, expect, it } from 'vitest';
import { reasonOf } from '../../src/eval/reasons.js';
import type { InstanceResult } from '../../src/eval/run.js';
import { sampleInstances } from '../../src/eval/sample.js';

const instances = [
  ...Array.from({ length: 10 }, (_, i) => ({ instance_id: `big__a-${i}`, repo: 'big/a' })),
  ...Array.from({ length: 3 }, (_, i) => ({ instance_id: `small__b-${i}`, repo: 'small/b' })),
  { instance_id: 'one__c-0', repo: 'one/c' },
];

describe('sampleInstances', () => {
  it('takes every repository in turn, in the data set order, the same subset each time', () => {
    const three = sampleInstances(instances, 3);
    expect(three.map((i) => i.repo).sort()).toEqual(['big/a', 'one/c', 'small/b']);
    expect(
      sampleInstances([...instances].reverse(), 3)
        .map((i) => i.instance_id)
        .sort(),
    ).toEqual(three.map((i) => i.instance_id).sort());
    // in the data set's order
    expect(three).toEqual(instances.filter((i) => three.includes(i)));
  });

  it('grows: a larger sample holds a smaller one, and a repository that runs out leaves its turn to the others', () => {
    for (let n = 1; n < instances.length; n++) {
      const small = sampleInstances(instances, n);
      const large = sampleInstances(instances, n + 1);
      expect(small).toHaveLength(n);
      expect(large.filter((i) => small.includes(i))).toEqual(small);
    }
    const nine = sampleInstances(instances, 9);
    expect(nine.filter((i) => i.repo === 'big/a')).toHaveLength(5);
    expect(nine.filter((i) => i.repo === 'small/b')).toHaveLength(3);
    expect(sampleInstances(instances, 100)).toEqual(instances);
  });
});

describe('reasonOf', () => {
  const result = (setup: InstanceResult['setup'], extra: Partial<InstanceResult> = {}): InstanceResult => ({
    instance_id: 'x',
    repo: 'o/r',
    mode: 'oracle',
    resolved: false,
    f2p: { passed: 0, total: 1 },
    p2p: { passed: 0, total: 0 },
    not_passed: ['t'],
    setup,
    wall_ms: 1,
    ...extra,
  });
  const setupFailed = (reason: string, missing?: true) =>
    reasonOf(result({ ok: false, failure: { stage: 'setup', reason, ...(missing ? { missing } : {}) } }));

  it('names the class of each way an instance is not resolved', () => {
    expect(reasonOf(result({ ok: true }, { resolved: true }))).toBeUndefined();
    expect(reasonOf(result({ ok: true }))).toEqual({ class: 'tests did not pass' });
    expect(reasonOf(result({ ok: true }, { edits: { applied: 0, failures: ['convert: a.js: …'] } }))).toEqual({
      class: 'edits not applied',
    });
    expect(reasonOf(result({ ok: false, failure: { stage: 'runner', reason: 'no test runner found' } }))).toEqual({
      class: 'no runner found',
    });
    expect(reasonOf(result({ ok: false, failure: { stage: 'test_patch', reason: 'git apply failed' } }))).toEqual({
      class: 'test patch did not apply',
    });
    expect(setupFailed('this repository needs go (go.mod), which the sandbox does not have', true)).toEqual({
      class: 'toolchain missing',
    });
    expect(setupFailed('the tests need a browser (karma-chrome-launcher): chromium is not installed', true)).toEqual({
      class: 'browser missing',
    });
  });

  it("reads a failed setup's kind from the tools' own words", () => {
    expect(setupFailed('exited with code 1: gyp ERR! build error | gyp ERR! stack')).toEqual({
      class: 'setup failed',
      why: 'native module build',
    });
    expect(setupFailed('exited with code 1: … | refused: github.com:443 (not a package registry)')?.why).toBe(
      'refused connection',
    );
    expect(setupFailed('exited with code 1: npm ERR! Invalid Version: 3001.0001.0000-dev-harmony-fb')?.why).toBe(
      'lockfile version string',
    );
    expect(setupFailed('exited with code 1: ERR_PNPM_META_FETCH_FAIL … ERR_INVALID_THIS')?.why).toBe(
      'package manager and node',
    );
    expect(setupFailed('timed out')?.why).toBe('timed out');
    expect(setupFailed('exited with code 1: cannot build')?.why).toBe('other');
  });
});
