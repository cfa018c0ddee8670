import { existsSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import { type Env, type VariableSchema, integer, oneOf, read, refuse, url } from './env.js';
import { type OutboundAllowRule, setupAllow } from './outbound.js';

/** Limits of one sandboxed command (src/sandbox applies them); here because the config sets the defaults. */
export interface SandboxLimits {
  /** Wall-clock limit; the whole process tree is killed when it passes. */
  timeoutMs: number;
  /** RLIMIT_CPU, seconds of CPU time. */
  cpuSeconds: number;
  /** RLIMIT_FSIZE, largest file a process may write, bytes. */
  fileSizeBytes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** Memory cap through the memory cgroup where the host offers one, bytes. */
  memoryBytes: number;
  /** Process-count cap through the pids cgroup where the host offers one. */
  maxProcesses: number;
  /** Output kept per stream; beyond it the tail is kept. */
  outputBytes: number;
}

/**
 * How the dependency-install phase reaches the network (docs/environments.md): through the
 * service's egress proxy, which lets it reach the package registries only; not at all; or with
 * the host's whole network (unsafe: loopback, private addresses, the cloud metadata address).
 */
export const SETUP_NETWORK_MODES = ['proxy', 'off', 'host'] as const;
export type SetupNetworkMode = (typeof SETUP_NETWORK_MODES)[number];

export interface SandboxConfig {
  /** bubblewrap in production; unsafe-host runs commands on the host, for development only. */
  mode: 'bubblewrap' | 'unsafe-host';
  /** How the dependency-install phase reaches the network (EMEND_SANDBOX_SETUP_NETWORK). */
  setupNetwork: SetupNetworkMode;
  /** EMEND_SANDBOX_SETUP_NETWORK=on was given: it means `host`, and start-up says it is deprecated. */
  setupNetworkDeprecatedOn: boolean;
  /** Hosts the setup phase may reach besides the public registries (EMEND_SETUP_ALLOW). */
  setupAllow: OutboundAllowRule[];
  /**
   * The operator's npm registry mirror (EMEND_NPM_REGISTRY): npm, pnpm and yarn install from it, and
   * the lockfiles' URLs of the public npm and yarn registries are fetched from it. Absent when unset.
   */
  npmRegistry?: string;
  /** The operator's PyPI mirror, a simple index (EMEND_PIP_INDEX_URL): pip's PIP_INDEX_URL. Absent when unset. */
  pipIndexUrl?: string;
  /** Extra host directories bound read-only at the same path (e.g. a pyenv root). */
  toolRoots: string[];
  /** Limits of a command that does not ask for others. */
  limits: SandboxLimits;
}

/** EMEND_SANDBOX_TOOL_ROOTS: absolute, existing directories, none holding the data dir. */
const toolRoots = (dataDir: string): VariableSchema<string[]> =>
  z.string().transform((raw, ctx) => {
    const roots: string[] = [];
    for (const p of raw.split(':').filter((p) => p.trim() !== '')) {
      const root = p.trim();
      if (!isAbsolute(root)) return refuse(ctx, `expected absolute paths, got "${root}"`);
      const path = resolve(root);
      // A root holding the data dir would show the database and the secret key to repository code.
      const fromRoot = relative(path, dataDir);
      if (path === '/' || fromRoot === '' || !fromRoot.startsWith('..'))
        return refuse(ctx, `${path} contains the data dir ${dataDir}; bind a narrower directory`);
      if (!existsSync(path)) return refuse(ctx, `${path} does not exist`);
      roots.push(path);
    }
    return roots;
  });

const MB = 1024 * 1024;

/** How repository commands are isolated (docs/sandbox.md). */
export function sandboxConfig(env: Env, dataDir: string): SandboxConfig {
  const mode = read(env, 'EMEND_SANDBOX', oneOf(['bubblewrap', 'unsafe-host']), 'bubblewrap');
  // `on`, its old spelling, means host.
  const given = read(env, 'EMEND_SANDBOX_SETUP_NETWORK', oneOf([...SETUP_NETWORK_MODES, 'on']), 'proxy');
  const npmRegistry = read(env, 'EMEND_NPM_REGISTRY', url('EMEND_NPM_REGISTRY'));
  const pipIndexUrl = read(env, 'EMEND_PIP_INDEX_URL', url('EMEND_PIP_INDEX_URL'));
  return {
    mode,
    setupNetwork: given === 'on' ? 'host' : given,
    setupNetworkDeprecatedOn: given === 'on',
    setupAllow: read(env, 'EMEND_SETUP_ALLOW', setupAllow, []),
    ...(npmRegistry !== undefined ? { npmRegistry } : {}),
    ...(pipIndexUrl !== undefined ? { pipIndexUrl } : {}),
    toolRoots: read(env, 'EMEND_SANDBOX_TOOL_ROOTS', toolRoots(dataDir), []),
    limits: {
      timeoutMs: read(env, 'EMEND_SANDBOX_TIMEOUT_S', integer(1, 86_400), 600) * 1000,
      cpuSeconds: read(env, 'EMEND_SANDBOX_CPU_S', integer(1, 86_400), 600),
      memoryBytes: read(env, 'EMEND_SANDBOX_MEMORY_MB', integer(16, 1024 * 1024), 2048) * MB,
      maxProcesses: read(env, 'EMEND_SANDBOX_PROCESSES', integer(8, 65_536), 512),
      fileSizeBytes: read(env, 'EMEND_SANDBOX_FILE_SIZE_MB', integer(1, 1024 * 1024), 1024) * MB,
      openFiles: read(env, 'EMEND_SANDBOX_OPEN_FILES', integer(16, 1024 * 1024), 4096),
      outputBytes: read(env, 'EMEND_SANDBOX_OUTPUT_KB', integer(1, 64 * 1024), 256) * 1024,
    },
  };
}
