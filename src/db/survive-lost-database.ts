import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './unavailable.js';

/**
 * Keeps a process that runs a worker alive through a lost database connection that rejected a
 * promise no one awaited: pg-boss 10 completes and fails a job without awaiting the query
 * (manager.js `watch`), so a database that goes down at that moment would end the process
 * (found by the soak). Such a job stays active until it expires, and the run's heartbeat and
 * takeover deal with the task as with any lost worker. Any other unhandled rejection still ends
 * the process, as Node would. Returns the undo.
 */
export function surviveLostDatabase(log: Logger): () => Promise<void> {
  const onRejection = (reason: unknown) => {
    if (!isDatabaseUnavailable(reason)) {
      // Node's own behaviour for an unhandled rejection: the process ends.
      process.nextTick(() => {
        throw reason;
      });
      return;
    }
    log.warn({ err: reason }, 'the database connection was lost under a query no one awaited; the worker goes on');
  };
  process.on('unhandledRejection', onRejection);
  return async () => {
    process.off('unhandledRejection', onRejection);
  };
}
