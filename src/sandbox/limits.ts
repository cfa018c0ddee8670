import type { SandboxLimits } from '../config/sandbox.js';

const NAMES: Array<keyof SandboxLimits> = [
  'timeoutMs',
  'cpuSeconds',
  'fileSizeBytes',
  'openFiles',
  'memoryBytes',
  'maxProcesses',
  'outputBytes',
];

/** The limits of one command: the configured defaults, with what the caller asked for on top. */
export function resolveLimits(defaults: SandboxLimits, asked: Partial<SandboxLimits> = {}): SandboxLimits {
  const limits = { ...defaults };
  for (const name of NAMES) {
    const value = asked[name];
    if (value === undefined) continue;
    if (!Number.isSafeInteger(value) || value < 1)
      throw new RangeError(`sandbox limit ${name} must be a positive integer, got ${value}`);
    limits[name] = value;
  }
  return limits;
}

/**
 * prlimit(1) arguments that set the per-process limits for the command and everything it
 * starts (limits are inherited across fork and exec). The hard CPU limit sits one second
 * above the soft one: SIGXCPU first, SIGKILL for a process that catches it. Core dumps are
 * off, or a process killed by SIGXCPU or SIGXFSZ would leave a core file in the work directory.
 * Not RLIMIT_AS: V8 reserves address space and Node dies under a low one; memory is the
 * memory cgroup's job. Not RLIMIT_NPROC: it counts per user on the host; the pids cgroup does it.
 */
export function prlimitArgs(prlimit: string, limits: SandboxLimits): string[] {
  return [
    prlimit,
    `--cpu=${limits.cpuSeconds}:${limits.cpuSeconds + 1}`,
    `--fsize=${limits.fileSizeBytes}`,
    `--nofile=${limits.openFiles}`,
    '--core=0',
    '--',
  ];
}
