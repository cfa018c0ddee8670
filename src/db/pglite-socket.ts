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

const SYNC = Buffer.from([0x53, 0, 0, 0, 4]);
function simpleQuery(text: string): Buffer {
  const body = Buffer.from(`${text}\0`);
  const head = Buffer.alloc(5);
  head[0] = 0x51; // 'Q'
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/** Follows message boundaries in PGlite's output: did it end with ReadyForQuery, idle? */
class IdleWatch {
  private head: number[] = [];
  private rest = 0;
  private readyMessage = false;
  idle = false;

  feed(data: Uint8Array) {
    let i = 0;
    while (i < data.length) {
      if (this.rest > 0) {
        const n = Math.min(this.rest, data.length - i);
        // ReadyForQuery's body is its one status byte.
        if (this.readyMessage) this.idle = data[i] === IDLE;
        this.rest -= n;
        i += n;
        continue;
      }
      this.head.push(data[i++]!);
      if (this.head.length === 5) {
        const length = Buffer.from(this.head).readInt32BE(1);
        this.readyMessage = this.head[0] === READY_FOR_QUERY;
        this.idle = false;
        this.rest = length - 4;
        this.head = [];
      }
    }
  }
}

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

  class Connection {
    private buffer = Buffer.alloc(0);
    private started = false;
    private closed = false;
    private chain: Promise<void> = Promise.resolve();

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
      await acquire(this);
      if (this.closed) return; // clean-up, chained after us, releases the session
      const watch = new IdleWatch();
      await pglite.runExclusive(() =>
        pglite.execProtocolRawStream(frame, {
          onRawData: (data) => {
            watch.feed(data);
            if (!this.closed && this.socket.writable) this.socket.write(Buffer.from(data));
          },
        }),
      );
      if (watch.idle) release(this);
    }

    /** A connection that goes away mid-transaction must not leave the session in it. */
    private async cleanUp() {
      if (owner !== this) return;
      try {
        await pglite.runExclusive(async () => {
          await pglite.execProtocolRaw(SYNC);
          if (pglite.isInTransaction()) await pglite.execProtocolRaw(simpleQuery('ROLLBACK'));
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
      await closed;
      rmSync(path, { force: true });
    },
  };
}
