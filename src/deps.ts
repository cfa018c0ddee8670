import type { Logger } from 'pino';
import type { Clock } from './clock.js';
import type { Config } from './config/config.js';
import type { Db } from './db/client.js';
import type { EventBus } from './events/bus.js';
import type { OllamaContext } from './llm/ollama.js';
import type { Metrics } from './metrics/registry.js';
import type { Outbound } from './outbound/outbound.js';
import type { AfterWork } from './processes/after-work.js';
import type { LocalRuns } from './processes/local-runs.js';
import type { TaskQueue } from './queue/task-queue.js';
import type { Sandbox } from './sandbox/types.js';
import type { ToolchainReport } from './environments/toolchain-report.js';
import type { InstallationTokens } from './scm/github/installation-tokens.js';
import type { TestRunSlots } from './validator/run-slots.js';

/** Everything the service's code needs from the outside, built in one place and passed in. */
export interface Deps {
  config: Config;
  db: Db;
  dbKind: 'pglite' | 'postgres';
  clock: Clock;
  log: Logger;
  /** Encrypts provider keys and code-host tokens (AES-256-GCM). */
  secretKey: Buffer;
  metrics: Metrics;
  /** Postgres LISTEN/NOTIFY: live logs, kills, wake-ups across processes. */
  events: EventBus;
  /** The durable queue of task runs (pg-boss). */
  queue: TaskQueue;
  /** Task runs in progress in this process, so a kill here can end them at once. */
  runs: LocalRuns;
  /** HTTP to the operator's own endpoints (managed providers, the code host); the real fetch in production. */
  fetch: typeof fetch;
  /** HTTP to URLs a user gave (a BYOK base_url): only through the outbound address policy. */
  outbound: Outbound;
  /** A model's window on an Ollama server, confirmed once per server and model for a few minutes. */
  ollamaContext: OllamaContext;
  /** Where every command on repository content runs (bubblewrap). */
  sandbox: Sandbox;
  /** GitHub App installation tokens minted by this process, kept until shortly before they expire. */
  appTokens: InstallationTokens;
  /** The toolchains found inside the sandbox, asked once (GET /health). */
  toolchains: ToolchainReport;
  /** The validations' test runs in flight in this process: a second run goes beside them only when it fits. */
  testRuns: TestRunSlots;
  /** What steps leave to finish after their result (a validation's copies removed): stopping waits for it. */
  afterWork: AfterWork;
}
