import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyBwrapError, describeDenied, findDenied, runBwrap } from '../../src/sandbox/denials.js';
import { newDir, realSandbox, removeDirs } from './helpers.js';

afterAll(removeDirs);

describe("bubblewrap's refusals, by feature", () => {
  it('names the feature each of its real messages is about', () => {
    expect(classifyBwrapError("bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n")).toEqual([
      'proc_mount',
    ]);
    expect(
      classifyBwrapError(
        'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged ' +
          "user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.",
      ),
    ).toEqual(['user_namespaces']);
    expect(
      classifyBwrapError(
        'bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)',
      ),
    ).toEqual(['user_namespaces']);
    expect(classifyBwrapError('bwrap: setting up uid map: Permission denied')).toEqual(['user_namespaces']);
    // podman's and Docker's default seccomp profiles, measured in the container proof
    expect(classifyBwrapError("bwrap: Can't set hostname to sandbox: Operation not permitted")).toEqual(['hostname']);
    expect(classifyBwrapError('bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted')).toEqual([
      'network_namespace',
    ]);
    expect(classifyBwrapError("bwrap: Can't mount tmpfs on /newroot/tmp: Operation not permitted")).toEqual(['mounts']);
    expect(classifyBwrapError('bwrap: Failed to make / slave: Permission denied')).toEqual(['mounts']);
    expect(classifyBwrapError('bash: line 1: exec: nosuch: not found')).toEqual([]);
  });

  it('says what is denied and the container option that allows it', () => {
    const words = describeDenied(['proc_mount']);
    expect(words).toContain('the container runtime refuses to mount /proc in the sandbox');
    expect(words).toContain('--security-opt unmask=/proc/*');
    expect(words).toContain('docs/operations.md');
    expect(describeDenied(['user_namespaces', 'network_namespace'])).toMatch(/user namespaces.*network namespace/s);
    expect(describeDenied(['hostname'])).toContain('--security-opt seccomp=unconfined');
  });
});

/** A bwrap that runs the real one in a world that denies something, as a container runtime does. */
function deniedBwrap(name: string, prelude: string): string {
  const path = join(newDir('emend-denied-bwrap-'), name);
  writeFileSync(path, `#!/bin/sh\n${prelude} "$0" "$@"\n`);
  chmodSync(path, 0o755);
  return path;
}

// Masking a file of /proc (podman and docker mask /proc/kcore and others so) makes the kernel
// refuse a fresh proc mount in a user namespace; unshare --mount needs root.
const MASKED_PROC = `exec unshare --mount --propagation private sh -c 'mount --bind /dev/null /proc/uptime && exec /usr/bin/bwrap "$@"'`;
// A user namespace whose own limit forbids nested ones: bwrap cannot make its namespace.
const NO_USERNS = `exec unshare --user --map-root-user sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec /usr/bin/bwrap "$@"'`;

describe.runIf(process.getuid?.() === 0)('a real bubblewrap the host denies a feature', { timeout: 60_000 }, () => {
  it('finds a masked /proc: /health says proc_mount and how to allow it', async () => {
    const bwrap = deniedBwrap('bwrap', MASKED_PROC);
    expect(await findDenied(runBwrap(bwrap), '')).toEqual(['proc_mount']);
    const { sandbox } = await realSandbox({}, { bwrapPath: bwrap, cgroups: false });
    const report = sandbox.report();
    expect(report).toMatchObject({ kind: 'unavailable', denied: ['proc_mount'] });
    expect(report.problem).toContain("Can't mount proc on /newroot/proc: Operation not permitted");
    expect(report.problem).toContain('run the container with --security-opt unmask=/proc/* (podman)');
  });

  it('finds user namespaces turned off', async () => {
    const bwrap = deniedBwrap('bwrap', NO_USERNS);
    const { sandbox } = await realSandbox({}, { bwrapPath: bwrap, cgroups: false });
    expect(sandbox.report()).toMatchObject({ kind: 'unavailable', denied: ['user_namespaces'] });
    expect(sandbox.report().problem).toContain('the host refuses to create user namespaces');
  });

  it('finds nothing denied by the real bubblewrap on this host', async () => {
    expect(await findDenied(runBwrap('/usr/bin/bwrap'), '')).toEqual([]);
    const { sandbox } = await realSandbox({}, { cgroups: false });
    expect(sandbox.report().kind).toBe('bubblewrap');
    expect(sandbox.report().denied).toBeUndefined();
  });
});
