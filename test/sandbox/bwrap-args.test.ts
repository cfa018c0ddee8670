import { describe, expect, it } from 'vitest';
import {
  type BwrapPlan,
  HOSTS,
  type HostLayout,
  SANDBOX_BROWSER,
  browserWrapper,
  bwrapArgs,
} from '../../src/sandbox/bwrap-args.js';
import { prlimitArgs } from '../../src/sandbox/limits.js';

const HOST: HostLayout = {
  rootEntries: [
    { path: '/bin', symlinkTo: 'usr/bin' },
    { path: '/lib', symlinkTo: 'usr/lib' },
    { path: '/lib64', directory: true },
  ],
  etc: ['/etc/ssl/certs', '/etc/alternatives'],
  etcNetwork: ['/etc/resolv.conf', '/etc/hosts'],
  sysrqTrigger: true,
};

const PLAN: BwrapPlan = {
  workdir: '/srv/ws/task-1',
  command: ['npm', 'test'],
  network: false,
  toolRoots: [],
  tmpBytes: 1 << 20,
  passwdFd: 3,
  groupFd: 4,
  hostsFd: 5,
};

/** The pairs (flag, value...) as one string each, for reading. */
function ops(args: string[]): string[] {
  const withValues: Record<string, number> = {
    '--uid': 1,
    '--gid': 1,
    '--cap-drop': 1,
    '--hostname': 1,
    '--ro-bind': 2,
    '--bind': 2,
    '--symlink': 2,
    '--proc': 1,
    '--dev': 1,
    '--tmpfs': 1,
    '--size': 1,
    '--perms': 1,
    '--ro-bind-data': 2,
    '--chdir': 1,
    '--setenv': 2,
    '--remount-ro': 1,
  };
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') {
      out.push(`-- ${args.slice(i + 1).join(' ')}`);
      break;
    }
    const n = withValues[args[i]!] ?? 0;
    out.push(args.slice(i, i + n + 1).join(' '));
    i += n;
  }
  return out;
}

describe('the bwrap command line', () => {
  it('isolates every namespace, drops to uid 1000 with no capabilities, and dies with its parent', () => {
    const args = ops(bwrapArgs(PLAN, HOST));
    expect(args.slice(0, 12)).toEqual([
      '--unshare-all',
      '--unshare-user',
      '--disable-userns',
      '--die-with-parent',
      '--new-session',
      '--uid 1000',
      '--gid 1000',
      '--cap-drop ALL',
      '--hostname sandbox',
      '--ro-bind /usr /usr',
      '--symlink usr/bin /bin',
      '--symlink usr/lib /lib',
    ]);
    expect(args).not.toContain('--share-net');
    expect(args).toContain('--ro-bind /lib64 /lib64');
  });

  it('shows a few public files of /etc, its own passwd, group and hosts, and never the host’s network files without network', () => {
    const args = ops(bwrapArgs(PLAN, HOST));
    expect(args).toEqual(
      expect.arrayContaining([
        '--ro-bind /etc/ssl/certs /etc/ssl/certs',
        '--ro-bind /etc/alternatives /etc/alternatives',
        '--ro-bind-data 3 /etc/passwd',
        '--ro-bind-data 4 /etc/group',
        '--ro-bind-data 5 /etc/hosts',
      ]),
    );
    expect(args.filter((a) => a.includes('/etc/') && a.startsWith('--'))).toHaveLength(5);
    expect(args.join('\n')).not.toContain('resolv.conf');
    expect(HOSTS).toBe('127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n');
    // with the host's network (setup in host mode) the host's own hosts file instead
    const shared = ops(bwrapArgs({ ...PLAN, network: true }, { ...HOST, etcNetwork: ['/etc/hosts'] }));
    expect(shared).toContain('--ro-bind /etc/hosts /etc/hosts');
    expect(shared).not.toContain('--ro-bind-data 5 /etc/hosts');
  });

  it('mounts its own /proc with /proc/sys and the SysRq trigger read-only, a private /dev and /tmp', () => {
    const args = ops(bwrapArgs(PLAN, HOST));
    const proc = args.indexOf('--proc /proc');
    expect(args.slice(proc, proc + 3)).toEqual([
      '--proc /proc',
      '--ro-bind /proc/sys /proc/sys',
      '--ro-bind /dev/null /proc/sysrq-trigger',
    ]);
    expect(args).toEqual(expect.arrayContaining(['--dev /dev', `--size ${1 << 20}`, '--tmpfs /tmp']));
    expect(ops(bwrapArgs(PLAN, { ...HOST, sysrqTrigger: false })).join('\n')).not.toContain('sysrq');
  });

  it('mounts a /dev/shm of its own, writable by all, and the browser script read-only and executable when it has a browser', () => {
    const args = ops(bwrapArgs(PLAN, HOST));
    const dev = args.indexOf('--dev /dev');
    expect(args.slice(dev, dev + 4)).toEqual(['--dev /dev', `--size ${1 << 20}`, '--perms 1777', '--tmpfs /dev/shm']);
    expect(args.join('\n')).not.toContain(SANDBOX_BROWSER);
    const withBrowser = ops(bwrapArgs({ ...PLAN, browserFd: 6 }, HOST));
    expect(withBrowser).toContain(`--ro-bind-data 6 ${SANDBOX_BROWSER}`);
    expect(withBrowser[withBrowser.indexOf(`--ro-bind-data 6 ${SANDBOX_BROWSER}`) - 1]).toBe('--perms 0555');
    // the host's Chromium, quoted, with the flags bubblewrap needs before the runner's own
    expect(browserWrapper("/opt/it's/chrome")).toBe(
      "#!/bin/sh\n# emend: the system's Chromium, as it can run inside the sandbox\n" +
        'case "${LD_PRELOAD:-}" in *libfaketime*) unset LD_PRELOAD FAKETIME ;; esac\n' +
        `exec '/opt/it'\\''s/chrome' --no-sandbox --headless --disable-gpu "$@"\n`,
    );
  });

  it('binds the work directory read-write as the one host path, tool roots read-only, and then makes the root read-only', () => {
    const args = ops(bwrapArgs({ ...PLAN, toolRoots: ['/opt/pyenv'], cwd: 'pkg/a' }, HOST));
    expect(args.filter((a) => a.startsWith('--bind '))).toEqual(['--bind /srv/ws/task-1 /workspace']);
    expect(args).toContain('--ro-bind /opt/pyenv /opt/pyenv');
    expect(args).toContain('--chdir /workspace/pkg/a');
    const remount = args.indexOf('--remount-ro /');
    expect(remount).toBeGreaterThan(args.indexOf('--bind /srv/ws/task-1 /workspace'));
    expect(args.slice(remount + 1).some((a) => /^--(ro-)?bind|^--tmpfs|^--symlink/.test(a))).toBe(false);
  });

  it('binds the directories asked for read-only over the work directory, and refuses one outside it', () => {
    const args = ops(bwrapArgs({ ...PLAN, readOnly: ['emend', 'a/b'] }, HOST));
    const workspace = args.indexOf('--bind /srv/ws/task-1 /workspace');
    expect(args.slice(workspace + 1, workspace + 3)).toEqual([
      '--ro-bind /srv/ws/task-1/emend /workspace/emend',
      '--ro-bind /srv/ws/task-1/a/b /workspace/a/b',
    ]);
    for (const bad of ['.', '..', '../x', 'a/../..', '/etc'])
      expect(() => bwrapArgs({ ...PLAN, readOnly: [bad] }, HOST)).toThrow(RangeError);
  });

  it('starts the command from a cleared environment with only what it is given', () => {
    const args = ops(bwrapArgs({ ...PLAN, env: { CI: 'true' } }, HOST));
    const clear = args.indexOf('--clearenv');
    expect(args.slice(clear)).toEqual([
      '--clearenv',
      '--setenv PATH /usr/local/bin:/usr/bin:/bin',
      '--setenv HOME /workspace',
      '--setenv LANG C.UTF-8',
      '--setenv USER sandbox',
      '--setenv CI true',
      '-- npm test',
    ]);
  });

  it('shares the network, with name resolution, only when asked', () => {
    const args = ops(bwrapArgs({ ...PLAN, network: true }, HOST));
    expect(args).toContain('--share-net');
    expect(args).toEqual(
      expect.arrayContaining(['--ro-bind /etc/resolv.conf /etc/resolv.conf', '--ro-bind /etc/hosts /etc/hosts']),
    );
  });

  it('refuses a cwd outside the work directory, bad variable names and an empty command', () => {
    expect(() => bwrapArgs({ ...PLAN, cwd: '../etc' }, HOST)).toThrow(/inside the work directory/);
    expect(() => bwrapArgs({ ...PLAN, cwd: '/etc' }, HOST)).toThrow(/inside the work directory/);
    expect(() => bwrapArgs({ ...PLAN, env: { 'A=B': 'x' } }, HOST)).toThrow(/bad environment variable name/);
    expect(() => bwrapArgs({ ...PLAN, command: [] }, HOST)).toThrow(/empty command/);
  });

  it('sets CPU, file size and open files through prlimit, and no core dumps', () => {
    const limits = {
      timeoutMs: 1000,
      cpuSeconds: 30,
      fileSizeBytes: 4096,
      openFiles: 256,
      memoryBytes: 1 << 26,
      maxProcesses: 64,
      outputBytes: 1024,
    };
    expect(prlimitArgs('/usr/bin/prlimit', limits)).toEqual([
      '/usr/bin/prlimit',
      '--cpu=30:31',
      '--fsize=4096',
      '--nofile=256',
      '--core=0',
      '--',
    ]);
  });
});
