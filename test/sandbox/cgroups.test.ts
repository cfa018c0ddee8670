import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CommandCgroup, detectCgroups } from '../../src/sandbox/cgroups.js';
import { newDir, removeDirs } from './helpers.js';

// Where per-command cgroups go, on directory trees shaped like the two cgroup layouts (this
// machine has v1 only; the real v1 path is exercised by every test of limits.test.ts).
describe('finding cgroups', () => {
  afterAll(removeDirs);

  it("v2: beside the service's own cgroup, with the controllers handed down, one directory for both", () => {
    const root = newDir();
    writeFileSync(join(root, 'cgroup.controllers'), 'cpu io memory pids\n');
    mkdirSync(join(root, 'system.slice', 'emend.service'), { recursive: true });
    writeFileSync(join(root, 'system.slice', 'cgroup.subtree_control'), 'memory pids\n');
    const support = detectCgroups({
      mounts: `cgroup2 ${root} cgroup2 rw,nosuid 0 0\n`,
      selfCgroup: '0::/system.slice/emend.service\n',
    });
    const base = join(root, 'system.slice', 'emend-sandbox');
    expect(support).toMatchObject({
      version: 'v2',
      memory: { version: 2, base },
      pids: { version: 2, base },
      notes: [],
    });
    // handed down to the per-command cgroups (a real cgroupfs adds each write; this file keeps the last)
    expect(readFileSync(join(base, 'cgroup.subtree_control'), 'utf8')).toMatch(/^\+(memory|pids)$/);
    const group = CommandCgroup.create(support, { memoryBytes: 1 << 26, maxProcesses: 50 })!;
    expect(group.procsFiles).toHaveLength(1);
    const dir = join(base, readdirSync(base).find((d) => d !== 'cgroup.subtree_control')!);
    expect(readFileSync(join(dir, 'memory.max'), 'utf8')).toBe(String(1 << 26));
    expect(readFileSync(join(dir, 'pids.max'), 'utf8')).toBe('50');
  });

  it('v2 without the memory controller: only what is there, and a note on what is not', () => {
    const root = newDir();
    writeFileSync(join(root, 'cgroup.controllers'), 'cpu pids\n');
    writeFileSync(join(root, 'cgroup.subtree_control'), 'pids\n');
    const support = detectCgroups({ mounts: `cgroup2 ${root} cgroup2 rw 0 0\n`, selfCgroup: '0::/\n' });
    expect(support).toMatchObject({ version: 'v2', pids: { base: join(root, 'emend-sandbox') } });
    expect(support.memory).toBeUndefined();
    expect(support.notes).toEqual([expect.stringContaining('memory controller')]);
  });

  it("v1: under the service's own cgroup in each hierarchy, a directory per controller", () => {
    const root = newDir();
    for (const c of ['memory', 'pids']) mkdirSync(join(root, c));
    const mounts = [
      `cgroup ${root}/memory cgroup rw,nosuid,memory 0 0`,
      `cgroup ${root}/pids cgroup rw,pids 0 0`,
      `cgroup2 ${root}/unified cgroup2 rw 0 0`,
    ].join('\n');
    const support = detectCgroups({ mounts, selfCgroup: '8:pids:/\n4:memory:/jobs/42\n0::/\n' });
    expect(support).toMatchObject({
      version: 'v1',
      memory: { version: 1, base: join(root, 'memory', 'jobs', '42', 'emend-sandbox') },
      pids: { version: 1, base: join(root, 'pids', 'emend-sandbox') },
    });
    const group = CommandCgroup.create(support, { memoryBytes: 1 << 26, maxProcesses: 50 })!;
    expect(group.procsFiles).toHaveLength(2);
  });

  it('none: no controller mounted', () => {
    expect(detectCgroups({ mounts: 'proc /proc proc rw 0 0\n', selfCgroup: '' })).toMatchObject({
      version: 'none',
      notes: [expect.stringContaining('memory'), expect.stringContaining('pids')],
    });
  });
});
