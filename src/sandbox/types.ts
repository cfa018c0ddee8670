import type { SandboxFeature } from './denials.js';
import type { SandboxLimits, SetupNetworkMode } from '../config/sandbox.js';
import type { EgressRecord } from './egress-proxy.js';

/**
 * The sandbox: every command the service runs on repository content goes through this
 * interface. The production implementation is bubblewrap (src/sandbox/bwrap.ts); the only
 * other one, unsafe-host, exists as an explicit opt-in for development (EMEND_SANDBOX=unsafe-host).
 */
export interface SandboxRequest {
  /** argv; no shell unless the caller runs one (e.g. ['sh', '-c', '...']). */
  command: string[];
  /** Host directory bound read-write at /workspace: the only writable host path. */
  workdir: string;
  /** Working directory inside the sandbox, relative to /workspace. */
  cwd?: string;
  /** Extra environment; the sandbox starts from an empty environment (PATH, HOME, LANG set by it). */
  env?: Record<string, string>;
  /**
   * Network is off unless asked for (the dependency-install phase), and then it is what
   * EMEND_SANDBOX_SETUP_NETWORK says: through the egress proxy (`proxy`, the default), the
   * host's (`host`), or none, in which case asking for it rejects the run (`off`).
   */
  network?: boolean;
  limits?: Partial<SandboxLimits>;
  signal?: AbortSignal;
  stdin?: string;
  /**
   * Directories of the work directory (relative paths) that the command sees read-only: what
   * the caller placed there for the command (the validator's pytest plugin) cannot be
   * changed by it. Each must be a real directory, not a symlink. bubblewrap only: the
   * unsafe-host mode protects nothing.
   */
  readOnlyPaths?: string[];
  /**
   * Host directories bound read-only at their own path for this command, besides the
   * configured tool roots: toolchains the service fetched for one repository (a node
   * version, pnpm), kept in its cache. Absolute, normalized paths (checked in bwrapArgs).
   */
  toolRoots?: string[];
  /** Called with each chunk of output as it arrives (the validator watches a test run's progress). */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
}

export interface SandboxResult {
  exitCode: number | null;
  /** The signal that ended the command, if any (SIGKILL after a timeout or a kill). */
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** Ended by the caller's abort signal. */
  aborted: boolean;
  stdout: string;
  stderr: string;
  /** True when output was cut to the limit (the tail is kept). */
  truncated: boolean;
  durationMs: number;
  /** Cgroup limits the command ran into (memory: the kernel killed a process for it; processes: a fork failed). */
  exceeded?: Array<'memory' | 'processes'>;
  /** With network through the egress proxy: where the command went, or tried to. */
  egress?: EgressRecord[];
}

/** What the host enforces, reported at start-up and in /health. */
export interface SandboxReport {
  kind: 'bubblewrap' | 'unsafe-host' | 'unavailable';
  version?: string;
  cgroups: 'v1' | 'v2' | 'none';
  memoryLimit: boolean;
  processLimit: boolean;
  limits: SandboxLimits;
  /** Whether the setup phase has any network (`setupNetwork` is not `off`). */
  networkForSetup: boolean;
  /** How it has it (EMEND_SANDBOX_SETUP_NETWORK). */
  setupNetwork: SetupNetworkMode;
  /** Host directories bound read-only besides /usr (EMEND_SANDBOX_TOOL_ROOTS). */
  toolRoots?: string[];
  /**
   * The browser a command can start, as a path inside the sandbox (a script running the host's
   * Chromium with the flags the sandbox needs); absent when the host has no Chromium.
   */
  browser?: string;
  /** Why repository commands cannot run, when kind is unavailable. */
  problem?: string;
  /**
   * The sandbox's features the host denies (src/sandbox/denials.ts): with `cgroups` alone the
   * sandbox runs without its cgroup limits; with any other it is unavailable.
   */
  denied?: SandboxFeature[];
  /** What the host lacks, e.g. why a cgroup controller is not used. */
  notes?: string[];
}

export interface Sandbox {
  report(): SandboxReport;
  run(request: SandboxRequest): Promise<SandboxResult>;
}
