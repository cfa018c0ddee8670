import { posix } from 'node:path';

/**
 * Where the run's work directory appears inside the sandbox. The path stays `/workspace` (what
 * repositories' logs and the agent's commands show, as in other coding agents' sandboxes); the
 * code names it SANDBOX_WORKDIR, since a workspace is the team (docs/decisions.md, issue 43).
 */
export const SANDBOX_WORKDIR = '/workspace';
/** The one user inside the sandbox. */
export const SANDBOX_UID = 1000;

/**
 * Where the sandbox's browser is, inside it: a small script (browserWrapper) that starts the
 * system's Chromium with the flags it needs there. Outside /usr, which is bound read-only from
 * the host: the script is the sandbox's own, written from the service (--ro-bind-data).
 */
export const SANDBOX_BROWSER = '/opt/emend/chromium';

/**
 * The browser script: the host's Chromium with the flags a bubblewrap sandbox needs, before the
 * caller's (so a runner's own flags come after and win where they repeat one). Chromium's own
 * sandbox makes user namespaces, which --disable-userns refuses inside ours: --no-sandbox, as
 * every CI container does (ours is the isolation). There is no display: --headless (the runner
 * asking for `Chrome`, not `ChromeHeadless`, still gets a browser), and no GPU. Under the eval's
 * clock (libfaketime, src/test-runs/test-clock.ts) Chromium never starts (its zygote hangs), so
 * the browser is started without it and keeps the real time.
 */
export function browserWrapper(chromium: string): string {
  const quoted = `'${chromium.replaceAll("'", `'\\''`)}'`;
  return [
    '#!/bin/sh',
    "# emend: the system's Chromium, as it can run inside the sandbox",
    'case "${LD_PRELOAD:-}" in *libfaketime*) unset LD_PRELOAD FAKETIME ;; esac',
    `exec ${quoted} --no-sandbox --headless --disable-gpu "$@"`,
    '',
  ].join('\n');
}

/** The environment every command starts from; nothing of the service's own reaches it. */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  // The work directory, which lasts from command to command (/tmp does not): what the install
  // phase puts in the user site (pip --user, caches) is there for the test phase.
  HOME: SANDBOX_WORKDIR,
  LANG: 'C.UTF-8',
  USER: 'sandbox',
};

export const PASSWD = `sandbox:x:${SANDBOX_UID}:${SANDBOX_UID}:sandbox:${SANDBOX_WORKDIR}:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`;
export const GROUP = `sandbox:x:${SANDBOX_UID}:\nnogroup:x:65534:\n`;
/**
 * The sandbox's own /etc/hosts: `localhost` is its own loopback. Test runners start servers on
 * it (vitest's workers, supertest); without a hosts file the name does not resolve at all.
 */
export const HOSTS = '127.0.0.1 localhost\n::1 localhost ip6-localhost ip6-loopback\n';

/**
 * The few files of /etc that programs need, all public: the rest (shadow, the host's
 * passwd, ssh keys, /etc/ssl/private) stays out. /etc/passwd and /etc/group are written
 * for the sandbox's user.
 */
export const ETC_ENTRIES = [
  '/etc/alternatives',
  '/etc/ssl/certs',
  '/etc/ssl/openssl.cnf',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  // Debian's /usr/bin/chromium sources /etc/chromium.d (its default flags); fontconfig reads /etc/fonts.
  '/etc/chromium',
  '/etc/chromium.d',
  '/etc/fonts',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/nsswitch.conf',
  '/etc/protocols',
  '/etc/services',
];
/** Name resolution, bound only when the command has the network. */
export const ETC_NETWORK_ENTRIES = ['/etc/resolv.conf', '/etc/hosts', '/etc/host.conf', '/etc/gai.conf'];

/** A top-level directory of the host's root: a symlink into /usr (merged /usr) or a directory. */
export type RootEntry = { path: string; symlinkTo: string } | { path: string; directory: true };

/** What the host looks like, gathered once (see hostLayout in bwrap.ts). */
export interface HostLayout {
  /** /bin, /sbin, /lib, /lib64 ... as they exist on the host. */
  rootEntries: RootEntry[];
  /** The entries of ETC_ENTRIES that exist. */
  etc: string[];
  /** The entries of ETC_NETWORK_ENTRIES that exist. */
  etcNetwork: string[];
  /** /proc/sysrq-trigger exists (kernels built with magic SysRq). */
  sysrqTrigger: boolean;
  /** The system's CA bundle, when it exists (inside /etc/ssl/certs, bound in). */
  caBundle?: string;
}

export interface BwrapPlan {
  /** Host directory bound read-write at /workspace. */
  workdir: string;
  /** Working directory relative to /workspace. */
  cwd?: string;
  command: string[];
  /** Added to BASE_ENV. */
  env?: Record<string, string>;
  network: boolean;
  toolRoots: string[];
  /** Directories of the work directory (relative paths) bound read-only over it. */
  readOnly?: string[];
  /** Host paths the service placed for the command (the egress relay and its socket), bound read-only at `dest`. */
  binds?: Array<{ source: string; dest: string }>;
  /** Size of the private /tmp (tmpfs), bytes. */
  tmpBytes: number;
  /** File descriptors the launcher fills with PASSWD, GROUP and HOSTS. */
  passwdFd: number;
  groupFd: number;
  hostsFd: number;
  /** The descriptor the launcher fills with the browser script (SANDBOX_BROWSER), when the sandbox has a browser. */
  browserFd?: number;
}

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The working directory inside the sandbox; a cwd that leaves /workspace is refused. */
export function sandboxCwd(cwd: string | undefined): string {
  const inside = posix.resolve(SANDBOX_WORKDIR, cwd ?? '.');
  if (inside !== SANDBOX_WORKDIR && !inside.startsWith(`${SANDBOX_WORKDIR}/`))
    throw new RangeError(`cwd must stay inside the work directory, got "${cwd}"`);
  return inside;
}

/** A directory of the work directory bound read-only: a relative path strictly inside /workspace. */
export function readOnlyPath(path: string): string {
  const inside = posix.resolve(SANDBOX_WORKDIR, path);
  if (posix.isAbsolute(path) || !inside.startsWith(`${SANDBOX_WORKDIR}/`))
    throw new RangeError(`a read-only path must be a directory inside the work directory, got "${path}"`);
  return inside;
}

/** A tool root: an absolute, normalized host path (bound at the same path inside). */
export function toolRoot(path: string): string {
  if (!posix.isAbsolute(path) || posix.normalize(path) !== path || path === '/')
    throw new RangeError(`a tool root must be an absolute, normalized directory path, got "${path}"`);
  return path;
}

/** The environment a command gets: BASE_ENV and the request's variables, checked. */
export function sandboxEnv(extra: Record<string, string> = {}): Record<string, string> {
  for (const [name, value] of Object.entries(extra)) {
    if (!ENV_NAME.test(name)) throw new RangeError(`bad environment variable name "${name}"`);
    if (value.includes('\0')) throw new RangeError(`environment variable ${name} holds a NUL byte`);
  }
  return { ...BASE_ENV, ...extra };
}

/**
 * The bubblewrap argv for one command (without the bwrap binary itself). Pure, so the
 * isolation can be read and tested in one place.
 *
 * Started as root, bwrap maps the sandbox's uid 1000 to root outside the user namespace;
 * with no capabilities that grants nothing over what is mounted, so what matters is what is
 * visible and writable: /usr, a few files of /etc and the tool roots read-only, /proc of the
 * sandbox's own pid namespace with /proc/sys read-only (its files check the owner's uid and
 * nothing else, and bwrap leaves them writable in this setup: a command could otherwise set
 * the host's sysctls), a private /dev and /tmp, and the work directory; the root itself is
 * read-only. --disable-userns keeps a command from making a user namespace of its own,
 * where it would have every capability again.
 */
export function bwrapArgs(plan: BwrapPlan, host: HostLayout): string[] {
  if (plan.command.length === 0) throw new RangeError('empty command');
  const args = [
    '--unshare-all',
    // Explicit, so that --disable-userns is accepted and a host without user namespaces fails loudly.
    '--unshare-user',
    ...(plan.network ? ['--share-net'] : []),
    '--disable-userns',
    '--die-with-parent',
    '--new-session',
    '--uid',
    String(SANDBOX_UID),
    '--gid',
    String(SANDBOX_UID),
    '--cap-drop',
    'ALL',
    '--hostname',
    'sandbox',
    '--ro-bind',
    '/usr',
    '/usr',
  ];
  for (const entry of host.rootEntries) {
    if ('symlinkTo' in entry) args.push('--symlink', entry.symlinkTo, entry.path);
    else args.push('--ro-bind', entry.path, entry.path);
  }
  for (const path of host.etc) args.push('--ro-bind', path, path);
  if (plan.network) for (const path of host.etcNetwork) args.push('--ro-bind', path, path);
  args.push('--perms', '0444', '--ro-bind-data', String(plan.passwdFd), '/etc/passwd');
  args.push('--perms', '0444', '--ro-bind-data', String(plan.groupFd), '/etc/group');
  // With the host's network the host's hosts file comes with it (above); otherwise the sandbox's own.
  if (!plan.network) args.push('--perms', '0444', '--ro-bind-data', String(plan.hostsFd), '/etc/hosts');
  args.push('--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys');
  if (host.sysrqTrigger) args.push('--ro-bind', '/dev/null', '/proc/sysrq-trigger');
  // /dev/shm as a tmpfs of its own, writable by all, as large as /tmp: Chromium's shared memory
  // and Python's multiprocessing expect it (bwrap's /dev holds only an empty directory there).
  args.push('--dev', '/dev', '--size', String(plan.tmpBytes), '--perms', '1777', '--tmpfs', '/dev/shm');
  if (plan.browserFd !== undefined)
    args.push('--perms', '0555', '--ro-bind-data', String(plan.browserFd), SANDBOX_BROWSER);
  args.push('--size', String(plan.tmpBytes), '--tmpfs', '/tmp', '--symlink', '../tmp', '/var/tmp');
  for (const root of plan.toolRoots.map(toolRoot)) args.push('--ro-bind', root, root);
  for (const bind of plan.binds ?? []) args.push('--ro-bind', bind.source, bind.dest);
  args.push('--bind', plan.workdir, SANDBOX_WORKDIR);
  // Over the work directory's bind, so the command cannot write them (nor unmount them: no capabilities).
  for (const path of plan.readOnly ?? []) {
    const inside = readOnlyPath(path);
    args.push('--ro-bind', posix.join(plan.workdir, posix.relative(SANDBOX_WORKDIR, inside)), inside);
  }
  args.push('--chdir', sandboxCwd(plan.cwd));
  // The root bwrap builds is a tmpfs of its own: read-only once everything is in place.
  args.push('--remount-ro', '/');
  args.push('--clearenv');
  for (const [name, value] of Object.entries(sandboxEnv(plan.env))) args.push('--setenv', name, value);
  args.push('--', ...plan.command);
  return args;
}
