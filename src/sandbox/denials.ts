import { execFile } from 'node:child_process';

/**
 * Which of the sandbox's features the host (a container runtime, most often) denies, in stable
 * names /health reports under `sandbox.denied`, and the words that say how to allow each.
 */
export const SANDBOX_FEATURES = [
  'user_namespaces',
  'proc_mount',
  'hostname',
  'network_namespace',
  'mounts',
  'cgroups',
] as const;
export type SandboxFeature = (typeof SANDBOX_FEATURES)[number];

// bubblewrap 0.4–0.11's messages (bubblewrap.c, utils.c, network.c), each for the feature it names.
const MESSAGES: Array<[RegExp, SandboxFeature]> = [
  [/No permissions to creat(e|ing) new namespace/i, 'user_namespaces'],
  [/Creating new namespace failed/i, 'user_namespaces'],
  [/(setting up|writing) [ug]id map|[ug]id_map|setgroups/i, 'user_namespaces'],
  [/Can't mount proc on/i, 'proc_mount'],
  // The sandbox names its host `sandbox` in a UTS namespace of its own; Docker's and podman's default
  // seccomp profiles allow sethostname only with CAP_SYS_ADMIN (measured in the container proof).
  [/Can't set hostname/i, 'hostname'],
  [/loopback:|RTM_NEWADDR|RTM_NEWLINK|Failed to look up lo\b|Creating new network namespace/i, 'network_namespace'],
  [
    /Can't mount (tmpfs|devpts|mqueue)|Failed to make \/ (r?slave|private)|Can't bind mount|Failed to mount tmpfs|pivot_root|Can't remount/i,
    'mounts',
  ],
];

/** The features bubblewrap's error text says were denied (none when it names none of them). */
export function classifyBwrapError(stderr: string): SandboxFeature[] {
  const found = new Set<SandboxFeature>();
  for (const line of stderr.split('\n')) {
    for (const [pattern, feature] of MESSAGES) if (pattern.test(line)) found.add(feature);
  }
  return SANDBOX_FEATURES.filter((f) => found.has(f));
}

const HOW: Record<SandboxFeature, string> = {
  user_namespaces:
    'the host refuses to create user namespaces: enable them (sysctl user.max_user_namespaces above 0; ' +
    'kernel.unprivileged_userns_clone=1 on older Debian kernels), and in a container use a seccomp profile that ' +
    "allows unshare/clone of namespaces (podman's default does; docker's default needs --security-opt seccomp=<a profile that allows it>)",
  proc_mount:
    'the container runtime refuses to mount /proc in the sandbox: run the container with --security-opt unmask=/proc/* ' +
    '(podman), --security-opt systempaths=unconfined (docker), procMount: Unmasked (Kubernetes), or a seccomp/AppArmor ' +
    'profile that allows it',
  hostname:
    "the container's seccomp profile refuses to set the sandbox's host name in its own UTS namespace (Docker's and " +
    "podman's default profiles allow sethostname only with CAP_SYS_ADMIN): run the container with --security-opt " +
    'seccomp=unconfined, or a profile that adds sethostname and setdomainname to the default',
  network_namespace:
    "the host refuses a new network namespace (the sandbox's no-network mode): allow CLONE_NEWNET in the container's " +
    'seccomp/AppArmor profile',
  mounts:
    'the host refuses the mounts the sandbox makes (tmpfs, bind mounts): allow mount in a new user namespace ' +
    "in the container's seccomp/AppArmor profile",
  cgroups:
    'commands cannot join the cgroups, so the memory and process limits are not in force: give the service a ' +
    'writable cgroup (cgroup v2 with the memory and pids controllers delegated)',
};

/** What is denied, in words, with the documented option that allows it. */
export function describeDenied(denied: readonly SandboxFeature[]): string {
  return `${denied.map((f) => HOW[f]).join('; ')}; see docs/operations.md, "Containers: what the sandbox needs"`;
}

/** Runs bwrap with `args`; its exit code and stderr. */
export type BwrapRun = (args: string[]) => Promise<{ code: number | null; stderr: string }>;

export const runBwrap =
  (bwrap: string): BwrapRun =>
  (args) =>
    new Promise((resolve) => {
      execFile(
        bwrap,
        args,
        { timeout: 10_000, env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } },
        (err, _stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : null) : 0;
          resolve({ code, stderr: String(stderr) });
        },
      );
    });

// Each feature alone, over the host's root read-only: the user namespace first (the others
// are made inside it), then a network namespace, then a fresh /proc in a new PID namespace.
const TRIES: Array<[SandboxFeature, string[]]> = [
  ['user_namespaces', ['--unshare-user', '--ro-bind', '/', '/', 'true']],
  ['network_namespace', ['--unshare-user', '--unshare-net', '--ro-bind', '/', '/', 'true']],
  ['proc_mount', ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--proc', '/proc', 'true']],
  ['hostname', ['--unshare-user', '--unshare-uts', '--hostname', 'sandbox', '--ro-bind', '/', '/', 'true']],
];

/**
 * After the full sandbox failed to start with `stderr`: which features are denied, from the
 * message and by trying each on its own (bwrap stops at the first refusal, so its message
 * names one at most).
 */
export async function findDenied(run: BwrapRun, stderr: string): Promise<SandboxFeature[]> {
  const denied = new Set(classifyBwrapError(stderr));
  for (const [feature, args] of TRIES) {
    // The try decides for its feature: the message may blame the user namespace for any
    // namespace bwrap made in the same clone.
    if ((await run(args)).code === 0) {
      denied.delete(feature);
      continue;
    }
    denied.add(feature);
    // Without a user namespace nothing else can be tried.
    if (feature === 'user_namespaces') break;
  }
  return SANDBOX_FEATURES.filter((f) => denied.has(f));
}
