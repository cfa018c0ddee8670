import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { Database } from '../db/client.js';

/**
 * Postgres LISTEN/NOTIFY as the service's event channel: SSE streams wake on new task logs,
 * workers hear kill signals and new tasks, across processes and machines. Payloads are
 * short strings (task ids); receivers read the details from the database.
 */
export interface EventBus {
  publish(channel: Channel, payload: string): Promise<void>;
  subscribe(channel: Channel, handler: (payload: string) => void): () => void;
  close(): Promise<void>;
}

export const CHANNELS = {
  /** A task's logs or status changed; payload: task id. */
  taskEvents: 'emend_task_events',
  /** A task was killed; payload: task id. */
  taskKill: 'emend_task_kill',
  /** A task is ready to be picked up; payload: task id. */
  taskQueued: 'emend_task_queued',
} as const;

export type Channel = (typeof CHANNELS)[keyof typeof CHANNELS];

type Handlers = Map<string, Set<(payload: string) => void>>;

function dispatch(handlers: Handlers, channel: string, payload: string) {
  for (const h of handlers.get(channel) ?? []) {
    try {
      h(payload);
    } catch {
      // one bad subscriber must not starve the others
    }
  }
}

/** The embedded database delivers notifications in-process. */
function pgliteBus(pglite: PGlite): EventBus {
  const handlers: Handlers = new Map();
  const listening = new Map<string, Promise<unknown>>();
  return {
    async publish(channel, payload) {
      await pglite.query('select pg_notify($1, $2)', [channel, payload]);
    },
    subscribe(channel, handler) {
      if (!handlers.has(channel)) handlers.set(channel, new Set());
      handlers.get(channel)!.add(handler);
      if (!listening.has(channel))
        listening.set(
          channel,
          pglite.listen(channel, (p) => dispatch(handlers, channel, p)),
        );
      return () => handlers.get(channel)?.delete(handler);
    },
    async close() {
      handlers.clear();
      await Promise.allSettled([...listening.keys()].map((c) => pglite.unlisten(c)));
    },
  };
}

/** PostgreSQL: one dedicated connection LISTENs for the process; it reconnects if dropped. */
function postgresBus(pool: pg.Pool): EventBus {
  const handlers: Handlers = new Map();
  let client: pg.PoolClient | undefined;
  let connecting: Promise<pg.PoolClient> | undefined;
  let closed = false;
  const connect = (): Promise<pg.PoolClient> =>
    (connecting ??= (async () => {
      const c = await pool.connect();
      c.on('notification', (m) => dispatch(handlers, m.channel, m.payload ?? ''));
      // A crash of the server arrives as 'error'; a connection cut on the way (a proxy, a
      // network) may arrive as a bare 'end'. Either way the listening connection is gone.
      let lost = false;
      const onLost = () => {
        if (lost || closed) return;
        lost = true;
        client = undefined;
        connecting = undefined;
        c.release(true);
        if (handlers.size > 0) setTimeout(() => void relisten(), 500);
      };
      c.on('error', onLost);
      c.on('end', onLost);
      for (const channel of handlers.keys()) await c.query(`listen ${pg.escapeIdentifier(channel)}`);
      client = c;
      return c;
    })().catch((err: unknown) => {
      // A failed attempt (the database down) must not stay the answer: the next one tries again.
      connecting = undefined;
      throw err;
    }));
  const relisten = async () => {
    try {
      await connect();
    } catch {
      if (!closed) setTimeout(() => void relisten(), 1000);
    }
  };
  return {
    async publish(channel, payload) {
      await pool.query('select pg_notify($1, $2)', [channel, payload]);
    },
    subscribe(channel, handler) {
      const fresh = !handlers.has(channel);
      if (fresh) handlers.set(channel, new Set());
      handlers.get(channel)!.add(handler);
      if (fresh) {
        void connect()
          .then((c) => c.query(`listen ${pg.escapeIdentifier(channel)}`))
          .catch(() => {
            if (!closed) setTimeout(() => void relisten(), 1000);
          });
      }
      return () => handlers.get(channel)?.delete(handler);
    },
    async close() {
      closed = true;
      handlers.clear();
      const c = client ?? (connecting ? await connecting.catch(() => undefined) : undefined);
      c?.release(true);
    },
  };
}

export function createEventBus(database: Database): EventBus {
  return database.pglite ? pgliteBus(database.pglite) : postgresBus(database.pool!);
}
