import { chmodSync, rmSync } from 'node:fs';
import { type Socket, createServer } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';

/**
 * Serves the embedded PGlite database to other local emend processes (CLI, extra workers)
 * over a Unix socket, speaking the PostgreSQL wire protocol.
 *
 * PGlite has a single backend session, shared with the server's own queries. The stock
 * server of @electric-sql/pglite-socket forwards each wire message on its own, so a
 * socket client's transaction could swallow the server's own queries (and their rollback
 * undo them), and two clients' extended-protocol messages could interleave. Here a
 * connection owns the session from its first message until PGlite answers
 * ReadyForQuery/idle (a whole query, an extended-protocol batch up to Sync, or a whole
 * transaction); while it does, it also holds PGlite's transaction lock, so the server's
 * own queries wait exactly as they wait for one another.
 */
export interface PgliteSocketServer {
  close(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;
const READY_FOR_QUERY = 0x5a; // 'Z'
const IDLE = 0x49; // 'I'
const TERMINATE = 0x58; // 'X'

const QUERY = 0x51; // 'Q'
const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);

const NOTIFICATION = 0x41; // 'A'

interface Notification {
  channel: string;
  payload: string;
}

/**
 * Reframes PGlite's raw output into whole messages: tells whether it ended with
 * ReadyForQuery/idle, and takes out notifications, which the server hands to PGlite's own
 * listeners (and through them to every listening connection) instead.
 */
class OutputFilter {
  private pending = Buffer.alloc(0);
  idle = false;
  notifications: Notification[] = [];

  /** The complete messages of data (and of what came before), notifications left out. */
  feed(data: Uint8Array): Buffer {
    this.pending = this.pending.length === 0 ? Buffer.from(data) : Buffer.concat([this.pending, data]);
    const keep: Buffer[] = [];
    let at = 0;
    while (this.pending.length - at >= 5) {
      const end = at + 1 + this.pending.readInt32BE(at + 1);
      if (this.pending.length < end) break;
      const type = this.pending[at];
      const message = this.pending.subarray(at, end);
      if (type === NOTIFICATION) {
        // Int32 sender pid, then channel and payload, each NUL-terminated.
        const [channel = '', payload = ''] = message
          .subarray(9, message.length - 1)
          .toString('utf8')
          .split('\0');
        this.notifications.push({ channel, payload });
      } else {
        keep.push(message);
        this.idle = type === READY_FOR_QUERY && message[5] === IDLE;
      }
      at = end;
    }
    this.pending = this.pending.subarray(at);
    return Buffer.concat(keep);
  }
}

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

const cstring = (s: string) => Buffer.from(`${s}\0`);

function notificationMessage(channel: string, payload: string): Buffer {
  const pid = Buffer.alloc(4);
  return message('A', Buffer.concat([pid, cstring(channel), cstring(payload)]));
}

/** CommandComplete and ReadyForQuery/idle: the answer to a LISTEN the server handled itself. */
const commandDone = (tag: string) => Buffer.concat([message('C', cstring(tag)), message('Z', Buffer.from('I'))]);

// LISTEN and UNLISTEN of a plain (lower-case) channel name, as node-postgres sends them.
const LISTEN_SQL = /^\s*(listen|unlisten)\s+(?:"([a-z_][a-z0-9_]*)"|([a-z_][a-z0-9_]*)|(\*))\s*;?\s*$/i;

export async function servePgliteOnSocket(pglite: PGlite, path: string): Promise<PgliteSocketServer> {
  // The caller holds the data-dir lock, so a socket file left here is a dead server's.
  rmSync(path, { force: true });

  let owner: Connection | undefined;
  let releaseLock: (() => void) | undefined;
  let wake: Array<() => void> = [];

  async function acquire(conn: Connection) {
    if (owner === conn) return;
    while (owner !== undefined) await new Promise<void>((r) => wake.push(r));
    owner = conn;
    await new Promise<void>((held) => {
      void pglite._runExclusiveTransaction(
        () =>
          new Promise<void>((release) => {
            releaseLock = release;
            held();
          }),
      );
    });
  }

  function release(conn: Connection) {
    if (owner !== conn) return;
    owner = undefined;
    const unlock = releaseLock;
    releaseLock = undefined;
    unlock?.();
    const waiting = wake;
    wake = [];
    for (const w of waiting) w();
  }

  /**
   * Notifications that reached a connection's raw output: handed to PGlite's listeners (the
   * server's own, and those of listening connections) by notifying again through PGlite.
   */
  let redelivering: Promise<void> = Promise.resolve();
  function redeliver(notifications: Notification[]) {
    for (const n of notifications) {
      redelivering = redelivering
        .then(() => pglite.query('select pg_notify($1, $2)', [n.channel, n.payload]))
        .then(
          () => {},
          () => {},
        );
    }
  }

  class Connection {
    private buffer = Buffer.alloc(0);
    private started = false;
    private closed = false;
    private chain: Promise<void> = Promise.resolve();
    private readonly listens = new Map<string, () => Promise<void>>();

    constructor(readonly socket: Socket) {
      socket.on('data', (data) => this.receive(data));
      socket.on('error', () => this.end());
      socket.on('close', () => this.end());
    }

    done(): Promise<void> {
      return this.chain;
    }

    end() {
      if (this.closed) return;
      this.closed = true;
      this.socket.destroy();
      this.chain = this.chain.then(() => this.cleanUp());
    }

    private receive(data: Buffer) {
      this.buffer = Buffer.concat([this.buffer, data]);
      for (;;) {
        const frame = this.nextFrame();
        if (!frame) return;
        this.chain = this.chain.then(() => this.handle(frame)).catch(() => this.end());
      }
    }

    private nextFrame(): Buffer | undefined {
      const headLength = this.started ? 5 : 4;
      if (this.buffer.length < headLength) return undefined;
      const length = this.started ? 1 + this.buffer.readInt32BE(1) : this.buffer.readInt32BE(0);
      if (this.buffer.length < length) return undefined;
      const frame = this.buffer.subarray(0, length);
      this.buffer = this.buffer.subarray(length);
      if (!this.started && frame.length >= 8 && frame.readInt32BE(4) === PROTOCOL_3) this.started = true;
      return frame;
    }

    private async handle(frame: Buffer) {
      if (this.closed) return;
      if (frame[0] === TERMINATE && frame.length === 5) return this.end();
      if (frame.length === 8 && (frame.readInt32BE(4) === SSL_REQUEST || frame.readInt32BE(4) === GSSENC_REQUEST)) {
        this.socket.write('N');
        return;
      }
      if (frame.length === 16 && frame.readInt32BE(4) === CANCEL_REQUEST) return this.end();
      if (owner !== this && frame[0] === QUERY && (await this.listenCommand(frame))) return;
      await acquire(this);
      if (this.closed) return; // clean-up, chained after us, releases the session
      const output = new OutputFilter();
      await pglite.runExclusive(() =>
        pglite.execProtocolRawStream(frame, {
          onRawData: (data) => {
            const whole = output.feed(data);
            if (whole.length > 0 && !this.closed && this.socket.writable) this.socket.write(whole);
          },
        }),
      );
      if (output.idle) release(this);
      redeliver(output.notifications);
    }

    /**
     * The session's LISTENs belong to PGlite, which hands notifications to its listeners
     * only for queries it ran itself; so a connection's LISTEN becomes a PGlite listener
     * that forwards to it, and its UNLISTEN cannot cancel the server's own.
     */
    private async listenCommand(frame: Buffer): Promise<boolean> {
      const match = LISTEN_SQL.exec(frame.subarray(5, frame.length - 1).toString('utf8'));
      if (!match) return false;
      const command = match[1]!.toLowerCase();
      const channel = match[2] ?? match[3]?.toLowerCase();
      if (command === 'listen') {
        if (channel === undefined) return false; // LISTEN * is not SQL: let PGlite say so
        if (!this.listens.has(channel)) {
          this.listens.set(channel, await pglite.listen(channel, (payload) => this.notify(channel, payload)));
        }
      } else {
        for (const name of channel === undefined ? [...this.listens.keys()] : [channel]) {
          const unlisten = this.listens.get(name);
          this.listens.delete(name);
          await unlisten?.();
        }
      }
      if (!this.closed) this.socket.write(commandDone(command.toUpperCase()));
      return true;
    }

    private notify(channel: string, payload: string) {
      if (!this.closed && this.socket.writable) this.socket.write(notificationMessage(channel, payload));
    }

    /** A connection that goes away mid-transaction must not leave the session in it. */
    private async cleanUp() {
      const listens = [...this.listens.values()];
      this.listens.clear();
      for (const unlisten of listens) await unlisten().catch(() => {});
      if (owner !== this) return;
      try {
        await pglite.runExclusive(async () => {
          await pglite.execProtocolRaw(SYNC);
          if (pglite.isInTransaction()) await pglite.execProtocolRaw(message('Q', cstring('ROLLBACK')));
        });
      } finally {
        release(this);
      }
    }
  }

  const connections = new Set<Connection>();
  const server = createServer((socket) => {
    const conn = new Connection(socket);
    connections.add(conn);
    socket.on('close', () => connections.delete(conn));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Only the data dir's owner may talk to the database.
  chmodSync(path, 0o600);

  return {
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const live = [...connections];
      for (const conn of live) conn.end();
      await Promise.all(live.map((c) => c.done()));
      await redelivering;
      await closed;
      rmSync(path, { force: true });
    },
  };
}
