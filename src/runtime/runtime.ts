import type { LookupFunction } from 'node:net';
import type { Logger } from 'pino';
import { type Clock, systemClock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { Database } from '../db/client.js';
import { InstallationTokens } from '../scm/github/installation-tokens.js';
import type { Deps } from '../deps.js';
import { CHANNELS, createEventBus } from '../events/bus.js';
import { createLogger } from '../logger.js';
import { createMetrics } from '../metrics/registry.js';
import { cachedOllamaContext } from '../llm/ollama.js';
import { createOutbound } from '../outbound/outbound.js';
import { LocalRuns } from '../processes/local-runs.js';
import { type QueueOptions, createTaskQueue } from '../queue/task-queue.js';
import { logSandboxReport } from '../sandbox/report-log.js';
import { createSandbox } from '../sandbox/sandbox.js';
import { AfterWork } from '../processes/after-work.js';
import { TestRunSlots } from '../validator/run-slots.js';
import type { Sandbox } from '../sandbox/types.js';
import { resolveSecretKey } from '../secrets/key.js';
import { ToolchainReport } from '../environments/toolchain-report.js';

export interface Runtime {
  deps: Deps;
  /** Stops the queue and the event bus (not the database: its opener closes it). */
  close(): Promise<void>;
}

/** Builds the one Deps object for an open database: events, queue, local runs, metrics. */
export async function createRuntime(
  config: Config,
  database: Database,
  overrides: {
    clock?: Clock;
    log?: Logger;
    fetch?: typeof fetch;
    lookup?: LookupFunction;
    queue?: QueueOptions;
    sandbox?: Sandbox;
  } = {},
): Promise<Runtime> {
  const log = overrides.log ?? createLogger(config.logLevel);
  const sandbox =
    overrides.sandbox ??
    (await createSandbox(config.sandbox, {
      protectedPaths: [config.dataDir],
      lookup: overrides.lookup,
      browserPath: config.site.chromiumPath,
    }));
  if (config.sandbox.setupNetworkDeprecatedOn)
    log.warn('EMEND_SANDBOX_SETUP_NETWORK=on is deprecated: it means host (unsafe); set proxy, off or host');
  logSandboxReport(log, sandbox.report());
  const events = createEventBus(database);
  // A task queued here wakes consumers in other processes at once (they LISTEN; see worker.ts).
  const queue = await createTaskQueue(database, {
    ...overrides.queue,
    announce: (taskId) => events.publish(CHANNELS.taskQueued, taskId),
  });
  const deps: Deps = {
    config,
    db: database.db,
    dbKind: database.kind,
    clock: overrides.clock ?? systemClock,
    log,
    secretKey: resolveSecretKey(config),
    metrics: createMetrics(),
    fetch: overrides.fetch ?? globalThis.fetch,
    // The resolver is replaceable so tests can show a name that changes address (DNS rebinding).
    outbound: createOutbound(config.outboundAllow, { lookup: overrides.lookup }),
    ollamaContext: cachedOllamaContext(overrides.clock ?? systemClock),
    appTokens: new InstallationTokens(overrides.clock ?? systemClock),
    events,
    queue,
    runs: new LocalRuns(),
    sandbox,
    // Probed when first asked (start-up, /health), not here: every test builds a runtime.
    toolchains: new ToolchainReport(sandbox),
    // Both trees of a validation at once when the machine has room (docs/validator.md, "Both trees at once").
    testRuns: TestRunSlots.forSandbox(sandbox.report(), config.validator.parallel),
    afterWork: new AfterWork((err) => log.warn({ err }, 'work left after a step failed')),
  };
  return {
    deps,
    close: async () => {
      await deps.afterWork.drain();
      await queue.stop().catch(() => {});
      await events.close().catch(() => {});
      await deps.outbound.close().catch(() => {});
    },
  };
}
