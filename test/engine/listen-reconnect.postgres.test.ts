import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/client.js';
import { CHANNELS, createEventBus } from '../../src/events/bus.js';
import { openTestDatabase, postgresUrlOf } from '../support/test-db.js';

/**
 * A TCP relay to the test cluster that can be cut (every connection dropped, new ones
 * refused) and restored on the same port: the database going away and coming back, as the
 * service sees it, without stopping the cluster the other tests share.
 */
async function relayTo(target: URL) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  const start = () =>
    new Promise<void>((resolve) => {
      server = createServer((inbound) => {
        const outbound = connect(Number(target.port), target.hostname);
        for (const s of [inbound, outbound]) {
          sockets.add(s);
          s.on('error', () => {});
          s.on('close', () => sockets.delete(s));
        }
        inbound.pipe(outbound).pipe(inbound);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server!.address() as { port: number }).port;
        resolve();
      });
    });
  await start();
  const dropAll = () => {
    for (const s of sockets) s.destroy();
  };
  return {
    port: () => port,
    async cut() {
      const closed = new Promise<void>((r) => server!.close(() => r()));
      dropAll();
      await closed;
    },
    restore: start,
    async close() {
      dropAll();
      if (server?.listening) {
        const closed = new Promise<void>((r) => server!.close(() => r()));
        dropAll();
        await closed;
      }
    },
  };
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c().catch(() => {});
  cleanup = [];
});

/** Calls `step` every 50 ms until `done()` or `ms` pass; says whether it got done. */
const until = async (done: () => boolean, ms: number, step: () => void = () => {}) => {
  const end = Date.now() + ms;
  while (!done() && Date.now() < end) {
    step();
    await new Promise((r) => setTimeout(r, 50));
  }
  return done();
};

// LISTEN carries kills to other workers within a second; after the database comes back the
// bus must listen again, also when its first attempts meet a database that is still down.
describe('the PostgreSQL event bus across an outage', () => {
  it('listens again once the database is back, after failed attempts while it was down', async () => {
    const owner = await openTestDatabase();
    cleanup.push(() => owner.close());
    const url = new URL(postgresUrlOf(owner)!);
    const relay = await relayTo(url);
    const viaRelay = new URL(url);
    viaRelay.port = String(relay.port());
    const database = openPostgres(viaRelay.toString(), { max: 4 });
    const bus = createEventBus(database);
    const direct = createEventBus(owner);
    cleanup.push(() => direct.close());
    cleanup.push(() => database.close());
    cleanup.push(() => bus.close());
    cleanup.push(() => relay.close());

    const got: string[] = [];
    bus.subscribe(CHANNELS.taskKill, (p) => got.push(p));
    const publish = (p: string) => () => void direct.publish(CHANNELS.taskKill, p).catch(() => {});
    // subscribe listens in the background: publish until it hears
    expect(await until(() => got.includes('before'), 5_000, publish('before'))).toBe(true);

    await relay.cut();
    // down long enough for the bus's reconnect attempts to fail more than once
    await new Promise((r) => setTimeout(r, 2_500));
    await relay.restore();
    expect(await until(() => got.includes('after'), 10_000, publish('after'))).toBe(true);
  });
});
