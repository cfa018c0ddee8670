import { randomBytes } from 'node:crypto';
import { systemClock } from '../clock.js';
import type { Config } from '../config/config.js';
import { openPglite, runMigrations } from '../db/client.js';
import { InstallationTokens } from '../scm/github/installation-tokens.js';
import type { Deps } from '../deps.js';
import { createEventBus } from '../events/bus.js';
import { cachedOllamaContext } from '../llm/ollama.js';
import { createLogger } from '../logger.js';
import { createMetrics } from '../metrics/registry.js';
import { createOutbound } from '../outbound/outbound.js';
import { LocalRuns } from '../processes/local-runs.js';
import type { TaskQueue } from '../queue/task-queue.js';
import { ToolchainReport } from '../environments/toolchain-report.js';
import type { Sandbox } from '../sandbox/types.js';
import { AfterWork } from '../processes/after-work.js';
import { TestRunSlots } from '../validator/run-slots.js';

/** The eval runs its steps in this process: nothing is queued, and a call to the queue is a bug. */
const noQueue: TaskQueue = {
  enqueue: () => Promise.reject(new Error('emend eval has no task queue')),
  work: () => Promise.reject(new Error('emend eval has no task queue')),
  wake: () => {},
  enqueueDelivery: () => Promise.reject(new Error('emend eval sends no webhooks')),
  workDeliveries: () => Promise.reject(new Error('emend eval sends no webhooks')),
  enqueueTrigger: () => Promise.reject(new Error('emend eval answers no code-host triggers')),
  workTriggers: () => Promise.reject(new Error('emend eval answers no code-host triggers')),
  depth: () => Promise.resolve(0),
  stop: () => Promise.resolve(),
};

/**
 * What the fix steps get as `helpers.deps` in an eval: the operator's configuration (model
 * keys, base URLs, prices, the locator cache under the data directory), the given sandbox, and
 * an empty in-memory database, migrated, so the steps' reads of repository memory find nothing:
 * every instance is measured without lessons from earlier tasks, and its reads of the task's
 * keys, secrets and repository settings find none. It holds no rows: the tasks live in memory and
 * what their steps report goes to the run's store (src/eval/pipeline.ts). No code host, no HTTP server.
 */
export async function evalDeps(config: Config, sandbox: Sandbox): Promise<{ deps: Deps; close(): Promise<void> }> {
  const database = await openPglite(undefined);
  await runMigrations(database);
  const events = createEventBus(database);
  const deps: Deps = {
    config,
    db: database.db,
    dbKind: database.kind,
    clock: systemClock,
    // On stderr: stdout is the progress and the summary line.
    log: createLogger(config.logLevel, process.stderr),
    // Only a BYOK key is ever decrypted with it, and an eval runs on the operator's keys.
    secretKey: config.secretKey ?? randomBytes(32),
    metrics: createMetrics(),
    events,
    queue: noQueue,
    runs: new LocalRuns(),
    fetch: globalThis.fetch,
    outbound: createOutbound(config.outboundAllow),
    sandbox,
    toolchains: new ToolchainReport(sandbox),
    testRuns: TestRunSlots.forSandbox(sandbox.report(), config.validator.parallel),
    afterWork: new AfterWork(),
    ollamaContext: cachedOllamaContext(systemClock),
    appTokens: new InstallationTokens(systemClock),
  };
  return {
    deps,
    close: async () => {
      await deps.afterWork.drain();
      await events.close().catch(() => {});
      await deps.outbound.close().catch(() => {});
      await database.close();
    },
  };
}
