import type { Database } from '../../src/db/client.js';

/**
 * Counts pg-boss's fetch queries (its `WITH next as (... pgboss.job ...)` statement) on a
 * database's client from now on: how often the queue's consumers look for a job.
 */
export function countFetches(database: Database): () => number {
  let fetches = 0;
  const target = (database.pglite ?? database.pool) as unknown as { query: (...args: unknown[]) => unknown };
  const original = target.query.bind(target);
  target.query = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && /^\s*WITH next as/i.test(args[0])) fetches += 1;
    return original(...args);
  };
  return () => fetches;
}
