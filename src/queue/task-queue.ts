import PgBoss from 'pg-boss';
import { type Database, withSchemaLock } from '../db/client.js';

export const TASK_QUEUE = 'emend-tasks';
/** Webhook delivery attempts: one job per attempt, started no earlier than the attempt is due. */
export const WEBHOOK_QUEUE = 'emend-webhooks';
/** Code-host triggers: act on a delivery received, or bring a triggered task's answer comment up to date. */
export const TRIGGER_QUEUE = 'emend-triggers';

/**
 * How long a queue's consumers other than the first sleep between looks when nobody wakes them:
 * a backstop, since the first consumer polls and wakes them when it takes a job.
 */
const IDLE_POLL_SECONDS = 30;

/** A trigger job: a recorded delivery (trigger_deliveries.id) to act on, or a task whose answer to refresh. */
export type TriggerJob = { delivery: string } | { answer: string };

/** The durable queue of "run this task" jobs: pg-boss on the service's own database. */
export interface TaskQueue {
  enqueue(taskId: string): Promise<void>;
  /**
   * Starts `concurrency` polling consumers; the handler runs one task at a time each.
   * Resolves to a function that stops these consumers (jobs they have not taken stay queued).
   */
  work(concurrency: number, handler: (taskId: string) => Promise<void>): Promise<() => Promise<void>>;
  /** Cuts the local consumers' polling sleep short (a task was just queued). */
  wake(): void;
  /** Queues an attempt of a webhook delivery, at once or at `at`. */
  enqueueDelivery(deliveryId: string, at?: Date): Promise<void>;
  /** Starts consumers of delivery attempts; resolves to a function that stops them. */
  workDeliveries(concurrency: number, handler: (deliveryId: string) => Promise<void>): Promise<() => Promise<void>>;
  /** Queues a trigger job. */
  enqueueTrigger(job: TriggerJob): Promise<void>;
  /** Starts consumers of trigger jobs; resolves to a function that stops them. */
  workTriggers(concurrency: number, handler: (job: TriggerJob) => Promise<void>): Promise<() => Promise<void>>;
  depth(): Promise<number>;
  stop(): Promise<void>;
}

/** pg-boss talks to PGlite through this adapter: parameterised queries, or plain multi-statement SQL. */
function pgliteAdapter(database: Database): PgBoss.Db {
  const pglite = database.pglite!;
  return {
    async executeSql(text: string, values: unknown[]) {
      if (values && values.length > 0) return pglite.query(text, values);
      const results = await pglite.exec(text);
      return results[results.length - 1] ?? { rows: [] };
    },
  } as PgBoss.Db;
}

export interface QueueOptions {
  /** How often idle consumers poll; NOTIFY and local wake-ups cut it short. */
  pollingIntervalSeconds?: number;
  /** Whether this process runs pg-boss maintenance (one per deployment is enough, more is harmless). */
  supervise?: boolean;
  /** Called after a task is queued, to wake consumers in other processes (a NOTIFY). */
  announce?: (taskId: string) => Promise<void>;
}

export async function createTaskQueue(database: Database, options: QueueOptions = {}): Promise<TaskQueue> {
  const db: PgBoss.Db = database.pglite
    ? pgliteAdapter(database)
    : { executeSql: (text: string, values: unknown[]) => database.pool!.query(text, values as unknown[]) };
  const boss = new PgBoss({ db, supervise: options.supervise ?? true, schedule: false, migrate: true });
  boss.on('error', () => {});
  const install = async () => {
    await boss.start();
    // The run's own heartbeat and takeover handle crashed workers, so pg-boss does not retry;
    // its expiry only backstops jobs whose worker vanished.
    await boss
      .createQueue(TASK_QUEUE, { name: TASK_QUEUE, retryLimit: 0, expireInSeconds: 6 * 3600 } as PgBoss.Queue)
      .catch(async (err) => {
        if (!(await boss.getQueue(TASK_QUEUE))) throw err;
      });
    // Delivery state (attempts, the next one, the lock) lives in webhook_deliveries; pg-boss only
    // wakes a worker when an attempt is due, so it never retries on its own either.
    await boss
      .createQueue(WEBHOOK_QUEUE, { name: WEBHOOK_QUEUE, retryLimit: 0, expireInSeconds: 300 } as PgBoss.Queue)
      .catch(async (err) => {
        if (!(await boss.getQueue(WEBHOOK_QUEUE))) throw err;
      });
    // A trigger job's state is its row (the delivery's status, the task's answered status), so a
    // failed job is retried by the sweep, not by pg-boss.
    await boss
      .createQueue(TRIGGER_QUEUE, { name: TRIGGER_QUEUE, retryLimit: 0, expireInSeconds: 300 } as PgBoss.Queue)
      .catch(async (err) => {
        if (!(await boss.getQueue(TRIGGER_QUEUE))) throw err;
      });
  };
  // Processes starting together on a fresh database would race to install pg-boss's schema.
  if (database.pool) await withSchemaLock(database, install);
  else await install();
  const workerIds: string[] = [];
  const deliveryWorkerIds: string[] = [];
  const triggerWorkerIds: string[] = [];
  const pollingIntervalSeconds = options.pollingIntervalSeconds ?? 0.5;
  /**
   * `concurrency` consumers of a queue, of which only the first polls at the polling interval;
   * the others sleep IDLE_POLL_SECONDS unless woken. Each poll is a query (on PGlite, CPU of this
   * process): ten consumers polling every half second kept an idle embedded worker twice as busy
   * (bench/idle-worker.ts). A consumer that takes a job wakes the others (more may be waiting),
   * and after a job looks again at once rather than after the polling sleep, which pg-boss takes
   * after every job shorter than it; a look that finds nothing puts it back to sleep.
   */
  const consumers = async <T extends object>(
    queue: string,
    concurrency: number,
    handler: (data: T) => Promise<void>,
    notified: string[],
  ) => {
    const mine: string[] = [];
    for (let i = 0; i < concurrency; i++) {
      let id: string | undefined;
      id = await boss.work<T>(
        queue,
        { pollingIntervalSeconds: i === 0 ? pollingIntervalSeconds : IDLE_POLL_SECONDS, batchSize: 1 },
        async ([job]) => {
          if (job) for (const other of mine) if (other !== id) boss.notifyWorker(other);
          try {
            if (job) await handler(job.data);
          } finally {
            if (id) boss.notifyWorker(id);
          }
        },
      );
      mine.push(id);
      notified.push(id);
    }
    // The stop function: these consumers leave pg-boss and the list a wake-up notifies.
    return async () => {
      for (const id of mine) {
        notified.splice(notified.indexOf(id), 1);
        await boss.offWork({ id });
      }
    };
  };
  return {
    async enqueue(taskId) {
      await boss.send(TASK_QUEUE, { taskId });
      for (const id of workerIds) boss.notifyWorker(id);
      await options.announce?.(taskId).catch(() => {});
    },
    work: (concurrency, handler) =>
      consumers<{ taskId: string }>(TASK_QUEUE, concurrency, (data) => handler(data.taskId), workerIds),
    wake() {
      for (const id of workerIds) boss.notifyWorker(id);
    },
    async enqueueDelivery(deliveryId, at) {
      await boss.send(WEBHOOK_QUEUE, { deliveryId }, at ? { startAfter: at } : {});
      if (!at) for (const id of deliveryWorkerIds) boss.notifyWorker(id);
    },
    workDeliveries: (concurrency, handler) =>
      consumers<{ deliveryId: string }>(
        WEBHOOK_QUEUE,
        concurrency,
        (data) => handler(data.deliveryId),
        deliveryWorkerIds,
      ),
    async enqueueTrigger(job) {
      await boss.send(TRIGGER_QUEUE, job);
      for (const id of triggerWorkerIds) boss.notifyWorker(id);
    },
    workTriggers: (concurrency, handler) =>
      consumers<TriggerJob>(TRIGGER_QUEUE, concurrency, handler, triggerWorkerIds),
    async depth() {
      return boss.getQueueSize(TASK_QUEUE);
    },
    async stop() {
      await boss.stop({ graceful: false, close: false, wait: true, timeout: 2000 });
    },
  };
}
