import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { type Database, openPglite } from '../../src/db/client.js';
import { DataDirLockedError, acquireDataDirLock, lockPath } from '../../src/db/data-dir-lock.js';
import { openClientDatabase, openServerDatabase, pgliteDir, socketPath } from '../../src/db/open.js';

// The embedded server shares its one PGlite session with the CLI and local workers over a
// Unix socket. Here, in one process: the server's side (openServerDatabase) and its clients.

/** A data dir holding the migrated template, so no test waits for initdb. */
async function migratedDataDir(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'emend-socket-'));
  const seeded = await openPglite(pgliteDir(dir), {
    loadDataDir: new Blob([new Uint8Array(readFileSync(inject('pgliteTemplate')))]),
  });
  await seeded.close();
  return dir;
}

function client(dataDir: string) {
  return new pg.Client({ host: dataDir, port: 5432, user: 'postgres', database: 'postgres' });
}

const within = <T>(ms: number, p: Promise<T>) =>
  Promise.race([
    p.then((v) => ({ done: true as const, value: v })),
    new Promise<{ done: false }>((r) => setTimeout(() => r({ done: false }), ms)),
  ]);

describe('the embedded database shared over its socket', { timeout: 60_000 }, () => {
  let dataDir: string;
  let server: Database | undefined;
  const clients: pg.Client[] = [];

  beforeEach(async () => {
    dataDir = await migratedDataDir();
    server = await openServerDatabase(loadConfig({ EMEND_DATA_DIR: dataDir }));
    await server.pglite!.exec(
      'create table counter (n int); insert into counter values (0); create table notes (body text)',
    );
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end().catch(() => {})));
    await server?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function connected() {
    const c = client(dataDir);
    c.on('error', () => {});
    await c.connect();
    clients.push(c);
    return c;
  }

  it('serves a socket only its owner may use', () => {
    const stat = statSync(socketPath(dataDir));
    expect(stat.isSocket()).toBe(true);
    expect(stat.mode & 0o777).toBe(0o600);
  });

  it("keeps a client's transaction apart from the server's own queries", async () => {
    const c = await connected();
    const pglite = server!.pglite!;
    await c.query('begin');
    await c.query(`insert into notes values ('uncommitted')`);
    // The server's own query waits for the transaction instead of running inside it.
    const direct = pglite.query<{ n: number }>('select count(*)::int as n from notes');
    const directWrite = pglite.query(`insert into notes values ('server')`);
    expect((await within(300, direct)).done).toBe(false);
    await c.query('rollback');
    expect((await direct).rows[0]!.n).toBe(0);
    await directWrite;
    // The client's rollback did not take the server's write with it.
    expect((await pglite.query<{ body: string }>('select body from notes')).rows).toEqual([{ body: 'server' }]);
  });

  it("keeps the server's transaction apart from a client's queries", async () => {
    const c = await connected();
    let inside: () => void = () => {};
    const held = new Promise<void>((r) => (inside = r));
    let finish: () => void = () => {};
    const finished = new Promise<void>((r) => (finish = r));
    const tx = server!.pglite!.transaction(async (t) => {
      await t.query(`insert into notes values ('server, then rolled back')`);
      inside();
      await finished;
      await t.rollback();
    });
    await held;
    const read = c.query<{ n: number }>('select count(*)::int as n from notes');
    expect((await within(300, read)).done).toBe(false);
    finish();
    await tx.catch(() => {});
    expect((await read).rows[0]!.n).toBe(0);
  });

  it('rolls back the transaction of a client that goes away in the middle of it', async () => {
    const c = await connected();
    await c.query('begin');
    await c.query(`insert into notes values ('lost')`);
    // A killed CLI process: the socket closes without COMMIT or Terminate.
    (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    const after = await within(5_000, server!.pglite!.query<{ n: number }>('select count(*)::int as n from notes'));
    expect(after).toEqual({ done: true, value: expect.objectContaining({ rows: [{ n: 0 }] }) });
    expect(server!.pglite!.isInTransaction()).toBe(false);
  });

  it('gives every client and the server their own answers under concurrency, losing no update', async () => {
    const cs = await Promise.all([connected(), connected(), connected(), connected()]);
    const pglite = server!.pglite!;
    const rounds = 25;
    const work: Promise<unknown>[] = [];
    for (let i = 0; i < rounds; i++) {
      cs.forEach((c, k) => {
        // Extended protocol with parameters: each answer must be this query's own.
        work.push(
          c
            .query<{ v: string }>('select $1::text as v', [`c${k}-${i}`])
            .then((r) => expect(r.rows[0]!.v).toBe(`c${k}-${i}`)),
        );
      });
      work.push(
        pglite.query<{ v: number }>('select $1::int * 2 as v', [i]).then((r) => expect(r.rows[0]!.v).toBe(i * 2)),
      );
    }
    // Read-modify-write in transactions, every client and the server at once: a transaction
    // seeing another's half-done work would lose an update and leave the counter short.
    work.push(
      ...cs.map(async (c) => {
        for (let i = 0; i < rounds; i++) {
          await c.query('begin');
          const { rows } = await c.query<{ n: number }>('select n from counter');
          await c.query('update counter set n = $1', [rows[0]!.n + 1]);
          await c.query('commit');
        }
      }),
    );
    work.push(
      (async () => {
        for (let i = 0; i < rounds; i++) {
          await pglite.transaction(async (t) => {
            const { rows } = await t.query<{ n: number }>('select n from counter');
            await t.query('update counter set n = $1', [rows[0]!.n + 1]);
          });
        }
      })(),
    );
    await Promise.all(work);
    const { rows } = await pglite.query<{ n: number }>('select n from counter');
    expect(rows[0]!.n).toBe(rounds * (cs.length + 1));
  });

  it('carries NOTIFY both ways between the server and its clients', async () => {
    const pglite = server!.pglite!;
    const heard: string[] = [];
    const unlisten = await pglite.listen('to_server', (p) => heard.push(`server: ${p}`));
    const a = await connected();
    const b = await connected();
    a.on('notification', (n) => heard.push(`a ${n.channel}: ${n.payload}`));
    b.on('notification', (n) => heard.push(`b ${n.channel}: ${n.payload}`));
    await a.query('listen "to_clients"');
    await b.query('LISTEN to_clients');
    await b.query('listen other');

    await a.query(`select pg_notify('to_server', 'from a')`);
    await pglite.query(`select pg_notify('to_clients', 'from the server')`);
    // Inside a client's transaction: delivered on commit, not before.
    await b.query('begin');
    await b.query(`select pg_notify('to_clients', 'from b, committed')`);
    await b.query('commit');
    await b.query('begin');
    await b.query(`select pg_notify('to_clients', 'from b, rolled back')`);
    await b.query('rollback');

    const expected = [
      'server: from a',
      'a to_clients: from the server',
      'b to_clients: from the server',
      'a to_clients: from b, committed',
      'b to_clients: from b, committed',
    ];
    const deadline = Date.now() + 5_000;
    while (heard.length < expected.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(heard.sort()).toEqual(expected.sort());

    // A client's UNLISTEN * ends its own listening, not the server's.
    await a.query('unlisten *');
    heard.length = 0;
    await pglite.query(`select pg_notify('to_clients', 'again')`);
    await b.query(`select pg_notify('to_server', 'still heard')`);
    while (heard.length < 2 && Date.now() < deadline + 5_000) await new Promise((r) => setTimeout(r, 20));
    expect(heard.sort()).toEqual(['b to_clients: again', 'server: still heard']);
    await unlisten();
  });

  it('removes the socket and releases the lock on close', async () => {
    await connected();
    await server!.close();
    server = undefined;
    expect(existsSync(socketPath(dataDir))).toBe(false);
    expect(existsSync(lockPath(dataDir))).toBe(false);
  });

  it('lets a CLI command through the socket, not beside the server', async () => {
    const cli = await openClientDatabase(loadConfig({ EMEND_DATA_DIR: dataDir }), { waitMs: 5_000 });
    try {
      expect(cli.kind).toBe('postgres');
      expect(cli.pglite).toBeUndefined();
    } finally {
      await cli.close();
    }
  });
});

describe('a CLI command on a data dir another CLI command holds', { timeout: 60_000 }, () => {
  it('waits for it to finish, then opens the data dir itself', async () => {
    const dataDir = await migratedDataDir();
    try {
      const release = acquireDataDirLock(dataDir, 'cli');
      setTimeout(release, 500);
      const started = Date.now();
      const cli = await openClientDatabase(loadConfig({ EMEND_DATA_DIR: dataDir }), { waitMs: 20_000 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(400);
      expect(cli.kind).toBe('pglite');
      await cli.close();
      expect(existsSync(lockPath(dataDir))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('gives up with the lock error when the holder stays', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'emend-socket-'));
    const release = acquireDataDirLock(dataDir, 'cli');
    try {
      await expect(openClientDatabase(loadConfig({ EMEND_DATA_DIR: dataDir }), { waitMs: 300 })).rejects.toThrow(
        DataDirLockedError,
      );
    } finally {
      release();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
