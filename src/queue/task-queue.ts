import PgBoss from 'pg-boss';
import { type Database, withSchemaLock } from '../db/client.js';

export const TASK_QUEUE = 'emend-tasks';
/** Webhook delivery attempts: one job per attempt, started no earlier than the attempt is due. */
export const WEBHOOK_QUEUE = 'emend-webhooks';
/** Code-host triggers: act on a delivery received, or bring a triggered task's answer comment up to date. */
export const TRIGGER_QUEUE = 'emend-triggers';

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
  /** The stop function of a work() call: its workers leave pg-boss and the list a wake-up notifies. */
  const stopWorkers = (mine: string[], notified: string[]) => async () => {
    for (const id of mine) {
      notified.splice(notified.indexOf(id), 1);
      await boss.offWork({ id });
    }
  };
  return {
    async enqueue(taskId) {
      await boss.send(TASK_QUEUE, { taskId });
      for (const id of workerIds) boss.notifyWorker(id);
      await options.announce?.(taskId).catch(() => {});
    },
    async work(concurrency, handler) {
      const mine: string[] = [];
      for (let i = 0; i < concurrency; i++) {
        let id: string | undefined;
        id = await boss.work<{ taskId: string }>(
          TASK_QUEUE,
          { pollingIntervalSeconds, batchSize: 1 },
          async ([job]) => {
            try {
              if (job) await handler(job.data.taskId);
            } finally {
              // More jobs may be waiting (queued while this one ran): look again at once rather
              // than after the polling sleep, which pg-boss takes after every job shorter than it.
              if (id) boss.notifyWorker(id);
            }
          },
        );
        mine.push(id);
        workerIds.push(id);
      }
      return stopWorkers(mine, workerIds);
    },
    wake() {
      for (const id of workerIds) boss.notifyWorker(id);
    },
    async enqueueDelivery(deliveryId, at) {
      await boss.send(WEBHOOK_QUEUE, { deliveryId }, at ? { startAfter: at } : {});
      if (!at) for (const id of deliveryWorkerIds) boss.notifyWorker(id);
    },
    async workDeliveries(concurrency, handler) {
      const mine: string[] = [];
      for (let i = 0; i < concurrency; i++) {
        const id = await boss.work<{ deliveryId: string }>(
          WEBHOOK_QUEUE,
          { pollingIntervalSeconds, batchSize: 1 },
          async ([job]) => {
            if (job) await handler(job.data.deliveryId);
          },
        );
        mine.push(id);
        deliveryWorkerIds.push(id);
      }
      return stopWorkers(mine, deliveryWorkerIds);
    },
    async enqueueTrigger(job) {
      await boss.send(TRIGGER_QUEUE, job);
      for (const id of triggerWorkerIds) boss.notifyWorker(id);
    },
    async workTriggers(concurrency, handler) {
      const mine: string[] = [];
      for (let i = 0; i < concurrency; i++) {
        const id = await boss.work<TriggerJob>(
          TRIGGER_QUEUE,
          { pollingIntervalSeconds, batchSize: 1 },
          async ([job]) => {
            if (job) await handler(job.data);
          },
        );
        mine.push(id);
        triggerWorkerIds.push(id);
      }
      return stopWorkers(mine, triggerWorkerIds);
    },
    async depth() {
      return boss.getQueueSize(TASK_QUEUE);
    },
    async stop() {
      await boss.stop({ graceful: false, close: false, wait: true, timeout: 2000 });
    },
  };
}
