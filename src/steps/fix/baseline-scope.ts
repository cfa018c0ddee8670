import { DbBaselineStore } from '../../validator/baseline-store.js';
import type { BaselineStore } from '../../validator/baseline-store.js';
import type { FixPayload, StepHelpers } from '../step.js';

/**
 * The kept baselines a task's validation uses (docs/validator.md, "Kept baselines"): the service's
 * database, EMEND_BASELINE_CACHE_MB, keyed within the task's workspace and its repository's URL, so
 * a follow-up, a retry and another task of the workspace on the same base reuse the baseline, and
 * no workspace is told what another's ran. Undefined when the cap is 0 or the task has no repository.
 */
export function baselineStoreFor(payload: FixPayload, helpers: StepHelpers): BaselineStore | undefined {
  const { config, db, secretKey, clock, metrics } = helpers.deps;
  if (!db || !secretKey || config.validator.baselineCacheBytes <= 0 || !payload.task.repoUrl) return undefined;
  return new DbBaselineStore({
    db,
    secretKey,
    workspace: payload.task.workspaceId,
    repository: payload.task.repoUrl,
    maxBytes: config.validator.baselineCacheBytes,
    now: () => clock.now(),
    // Test doubles of deps may have no metrics.
    ...(metrics
      ? { metrics: { hit: () => metrics.baselineCacheHits.inc(), miss: () => metrics.baselineCacheMisses.inc() } }
      : {}),
  });
}
