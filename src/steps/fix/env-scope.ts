import { join } from 'node:path';
import type { Metrics } from '../../metrics/registry.js';
import { EnvironmentCache } from '../../environments/env-cache.js';
import type { EnvironmentScope } from '../../environments/env-setup.js';
import type { FixPayload, StepHelpers } from '../step.js';

/** The cache's events as the service's metrics (emend_env_cache_*). */
export function envCacheMetrics(metrics: Metrics) {
  return {
    hit: () => metrics.envCacheHits.inc(),
    miss: () => metrics.envCacheMisses.inc(),
    built: (seconds: number) => metrics.envCacheBuildSeconds.observe(seconds),
    bytes: (total: number) => metrics.envCacheBytes.set(total),
  };
}

/**
 * The environment cache a task's validation uses (docs/environments.md, "Cached environments"):
 * `<data dir>/environments`, EMEND_ENV_CACHE_MB, entries keyed by the task's workspace and its
 * repository's URL (among the rest), so no workspace is served what another's setup fetched.
 * Undefined when the cache is off.
 */
export function environmentScopeFor(payload: FixPayload, helpers: StepHelpers): EnvironmentScope | undefined {
  const { config, metrics } = helpers.deps;
  if (config.validator.envCacheBytes <= 0 || !payload.task.repoUrl) return undefined;
  return {
    cache: new EnvironmentCache({
      dir: join(config.dataDir, 'environments'),
      maxBytes: config.validator.envCacheBytes,
      // Test doubles of deps may have no metrics.
      ...(metrics ? { metrics: envCacheMetrics(metrics) } : {}),
    }),
    workspace: payload.task.workspaceId,
    repository: payload.task.repoUrl,
  };
}
