import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** One registry per app instance (no global default registry), so tests and apps never share counters. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'emend_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'emend_http_requests_total',
      help: 'HTTP requests by method, route and status',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'emend_http_request_duration_seconds',
      help: 'HTTP request latency by method and route',
      labelNames: ['method', 'route'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    tasksCreated: new Counter({
      name: 'emend_tasks_created_total',
      help: 'Tasks created by type and mode',
      labelNames: ['task_type', 'mode'] as const,
      registers: [registry],
    }),
    tasksFinished: new Counter({
      name: 'emend_tasks_finished_total',
      help: 'Tasks that reached a final state, by status, type and mode',
      labelNames: ['status', 'task_type', 'mode'] as const,
      registers: [registry],
    }),
    stepDuration: new Histogram({
      name: 'emend_step_duration_seconds',
      help: 'Pipeline step duration by step',
      labelNames: ['step'] as const,
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    gateWaits: new Counter({
      name: 'emend_gate_waits_total',
      help: 'Times a task stopped at an approval gate, by stage',
      labelNames: ['stage'] as const,
      registers: [registry],
    }),
    webhookDeliveries: new Counter({
      name: 'emend_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome: success, retry (scheduled again), failure (given up)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    envCacheHits: new Counter({
      name: 'emend_env_cache_hits_total',
      help: 'Validations whose environment was copied from the cache (docs/environments.md)',
      registers: [registry],
    }),
    envCacheMisses: new Counter({
      name: 'emend_env_cache_misses_total',
      help: 'Validations that found no cached environment and ran setup on the base commit',
      registers: [registry],
    }),
    envCacheBuildSeconds: new Histogram({
      name: 'emend_env_cache_build_seconds',
      help: 'Storing a cached environment: copying what the base commit’s setup produced into the cache',
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    envCacheBytes: new Gauge({
      name: 'emend_env_cache_bytes',
      help: 'Bytes the cached environments hold, as of the last build, eviction or purge by this process',
      registers: [registry],
    }),
    baselineCacheHits: new Counter({
      name: 'emend_baseline_cache_hits_total',
      help: 'Validations whose baseline was reused from the kept baselines (docs/validator.md, "Kept baselines")',
      registers: [registry],
    }),
    baselineCacheMisses: new Counter({
      name: 'emend_baseline_cache_misses_total',
      help: 'Validations that looked for a kept baseline, found none, and ran the base commit’s tests',
      registers: [registry],
    }),
    webhookDeliverySeconds: new Histogram({
      name: 'emend_webhook_attempt_duration_seconds',
      help: 'How long a webhook endpoint took to answer one attempt',
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

export interface DatabaseSnapshot {
  tasks: { status: string; taskType: string; mode: string; count: number }[];
  costUsd: number;
  queueDepth: number;
  /** Pull requests the service opened that were merged. */
  prsMerged: number;
}

/**
 * Gauges read from the database at scrape time, so every API node reports the same totals.
 * prom-client asks every metric at once, so each gauge collects from one shared snapshot:
 * the first to ask starts the read, the others of the same scrape wait for it.
 */
export function registerDatabaseGauges(metrics: Metrics, read: () => Promise<DatabaseSnapshot>) {
  let pending: Promise<DatabaseSnapshot> | undefined;
  const snapshot = () => {
    pending ??= read().finally(() => {
      pending = undefined;
    });
    return pending;
  };
  new Gauge({
    name: 'emend_tasks',
    help: 'Tasks by status, type and mode',
    labelNames: ['status', 'task_type', 'mode'] as const,
    registers: [metrics.registry],
    async collect() {
      const s = await snapshot();
      this.reset();
      for (const t of s.tasks) this.set({ status: t.status, task_type: t.taskType, mode: t.mode }, t.count);
    },
  });
  const single = (name: string, help: string, pick: (s: DatabaseSnapshot) => number) =>
    new Gauge({
      name,
      help,
      registers: [metrics.registry],
      async collect() {
        this.set(pick(await snapshot()));
      },
    });
  single('emend_task_cost_usd_total', 'Model cost of all tasks, in US dollars', (s) => s.costUsd);
  single('emend_queue_depth', 'Task runs queued and not yet taken by a worker', (s) => s.queueDepth);
  single('emend_prs_merged', 'Pull requests the service opened that have been merged', (s) => s.prsMerged);
}
