import { describe, expect, it } from 'vitest';
import { withoutDependencyListings } from '../../src/locator/prompt-noise.js';

describe('dependency listings in a bug report', () => {
  it('drops pip list, pip freeze and --version lines and keeps everything else line for line', () => {
    const report = [
      'Dynamically adding an xfail marker no longer ignores the failure',
      'Package        Version   Location',
      '-------------- --------- ---------',
      'attrs          19.3.0',
      'wcwidth        0.1.8     /usr/lib/python3/dist-packages',
      'packaging==20.0',
      'pylint 2.14.4',
      'x = 1.5',
      '    assert foo == (3 + 2) * (6 + 9)',
      'see version 2.0 for details',
    ].join('\r\n');
    const kept = withoutDependencyListings(report).split('\n');
    expect(kept).toHaveLength(10);
    expect(kept.filter((l) => l.trim())).toEqual([
      'Dynamically adding an xfail marker no longer ignores the failure\r',
      'x = 1.5\r',
      '    assert foo == (3 + 2) * (6 + 9)\r',
      'see version 2.0 for details',
    ]);
  });
});
