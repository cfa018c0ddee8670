import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkoutPaths } from '../../src/checkout/checkout.js';
import { mirrorsRootOf, taskWorkDirOf, workRootOf } from '../../src/checkout/layout.js';
import { mirrorPath } from '../../src/checkout/mirrors.js';

// Issue 14, point 4: the <data>/work/<id> layout is known in src/checkout/layout.ts only; the
// checkout, the worker's sweep of stale checkouts and the site fixer all ask it.
describe('the data directory layout', () => {
  const data = '/srv/emend-data';

  it('puts a task’s directory at <data>/work/<id>, its checkout in tree/ and git/ below it', () => {
    expect(workRootOf(data)).toBe(join(data, 'work'));
    expect(taskWorkDirOf(data, 'task-1')).toBe(join(data, 'work', 'task-1'));
    expect(checkoutPaths(data, 'task-1')).toEqual({
      root: join(data, 'work', 'task-1'),
      dir: join(data, 'work', 'task-1', 'tree'),
      gitDir: join(data, 'work', 'task-1', 'git'),
    });
  });

  it('puts mirrors under <data>/mirrors', () => {
    expect(mirrorsRootOf(data)).toBe(join(data, 'mirrors'));
    expect(mirrorPath(data, 'https://github.com/Psf/Requests')).toBe(
      join(data, 'mirrors', 'github.com', 'psf', 'requests.git'),
    );
  });
});
