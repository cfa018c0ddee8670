import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { setupFetch } from '../sandbox/egress-fetch.js';
import { createSandbox } from '../sandbox/sandbox.js';
import type { Sandbox } from '../sandbox/types.js';
import { EnvironmentCache } from '../environments/env-cache.js';
import { ToolchainCache } from '../environments/toolchain-cache.js';

/**
 * The configured sandbox for a command that runs tests on this machine (`emend validate`,
 * `emend eval`), or undefined once stderr says why it is unavailable: the command then exits 1.
 */
export async function localSandbox(config: Config): Promise<Sandbox | undefined> {
  const sandbox = await createSandbox(config.sandbox, {
    protectedPaths: [config.dataDir],
    browserPath: config.site.chromiumPath,
  });
  const report = sandbox.report();
  if (report.kind === 'unavailable') {
    console.error(`emend: the sandbox is unavailable: ${report.problem}`);
    return undefined;
  }
  return sandbox;
}

/** The service's toolchain cache, fetched under the setup policy, so the CLI builds environments as a task does. */
export function localToolchainCache(config: Config): ToolchainCache {
  return new ToolchainCache({
    dir: join(config.dataDir, 'toolchains'),
    fetch: setupFetch(config.sandbox.setupAllow),
  });
}

/** The data dir's environment cache, as tasks use it, or undefined where EMEND_ENV_CACHE_MB turns it off. */
export function localEnvironmentCache(config: Config): EnvironmentCache | undefined {
  if (config.validator.envCacheBytes <= 0) return undefined;
  return new EnvironmentCache({ dir: join(config.dataDir, 'environments'), maxBytes: config.validator.envCacheBytes });
}
