/**
 * Idempotency-Key benchmark (not a test: it prints figures and asserts nothing about time).
 *
 * Latency of POST /v1/tasks over real HTTP, one request at a time, on PGlite and on
 * PostgreSQL: without a key, with a new key (claim + create + stored answer), and a replay of
 * a used key; then a burst of 10 simultaneous POSTs with one key (the time until all 10 have
 * their answer). The difference between the first two is what a key costs a creation.
 *
 *   npm run bench:idempotency       BENCH_REQUESTS (default 100) per kind, BENCH_BURSTS (default 10)
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { eq, sql } from 'drizzle-orm';
import { createAccount } from '../src/accounts/accounts.js';
import { buildApp } from '../src/app.js';
import { systemClock } from '../src/clock.js';
import { loadConfig } from '../src/config/config.js';
import { type Database, runMigrations } from '../src/db/client.js';
import { tasks } from '../src/db/schema.js';
import { createLogger } from '../src/logger.js';
import { createRuntime } from '../src/runtime/runtime.js';
import { startBenchCodeHost } from './code-host.js';
import { onEachDatabase } from './databases.js';
import { envInt, loadAverage, log, median, percentile, pressure } from './stats.js';

const REQUESTS = envInt('BENCH_REQUESTS', 100);
const BURSTS = envInt('BENCH_BURSTS', 10);
const BODY = JSON.stringify({
  prompt: 'Fix the off-by-one error in the pagination helper',
  repo_url: 'https://github.com/acme/widgets',
});

const ms = (x: number) => x.toFixed(1).padStart(7);

async function benchDatabase(label: string, database: Database) {
  await runMigrations(database);
  const dataDir = mkdtempSync(join(os.tmpdir(), 'emend-bench-idem-'));
  const host = await startBenchCodeHost([['acme', 'widgets']]);
  const config = loadConfig({
    EMEND_DATA_DIR: dataDir,
    EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    ...host.env,
  });
  const runtime = await createRuntime(config, database, { clock: systemClock, log: createLogger('silent') });
  const app = await buildApp(runtime.deps);
  const url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/v1/tasks`;
  const db = runtime.deps.db;
  let seq = 0;

  // An account answers at most 20 POSTs a minute and runs 5 tasks at once: a fresh account
  // every 5 creations, and its tasks finished at once, keep both limits out of the figures.
  let account: { id: string; header: string } | undefined;
  let used = 0;
  const accountFor = async () => {
    if (!account || used === 5) {
      const made = await createAccount(runtime.deps, {
        email: `idem${++seq}-${randomBytes(3).toString('hex')}@example.com`,
        plan: 'scale',
        credits: 1000,
      });
      await host.connect(runtime.deps, made.account.id);
      account = { id: made.account.id, header: `Bearer ${made.token.secret}` };
      used = 0;
    }
    used++;
    return account;
  };
  const finish = async (accountId: string) => {
    await db
      .update(tasks)
      .set({ status: 'running' })
      .where(sql`${tasks.workspaceId} = ${accountId} and ${tasks.status} = 'pending'`);
    await db
      .update(tasks)
      .set({ status: 'done' })
      .where(sql`${tasks.workspaceId} = ${accountId} and ${tasks.status} = 'running'`);
  };
  const send = (header: string, key?: string) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: header,
        'content-type': 'application/json',
        ...(key ? { 'idempotency-key': key } : {}),
      },
      body: BODY,
    });

  const timed = async (kind: 'no key' | 'new key' | 'replay'): Promise<number[]> => {
    const times: number[] = [];
    let replayKey: { header: string; key: string } | undefined;
    for (let i = 0; i < REQUESTS; i++) {
      let header: string;
      let key: string | undefined;
      if (kind === 'replay') {
        if (!replayKey) {
          const a = await accountFor();
          replayKey = { header: a.header, key: `replayed-${randomBytes(4).toString('hex')}` };
          if ((await send(replayKey.header, replayKey.key)).status !== 201)
            throw new Error('the first POST of the replayed key failed');
        }
        ({ header, key } = replayKey);
      } else {
        const a = await accountFor();
        header = a.header;
        key = kind === 'new key' ? randomBytes(16).toString('hex') : undefined;
      }
      const t0 = performance.now();
      const res = await send(header, key);
      times.push(performance.now() - t0);
      await res.arrayBuffer();
      if (res.status !== 201) throw new Error(`${kind}: answered ${res.status}`);
      if (kind !== 'replay' && account) await finish(account.id);
    }
    return times;
  };

  try {
    await timed('no key'); // warm-up: JIT, connections, the code host's client
    const rows: [string, number[]][] = [];
    for (const kind of ['no key', 'new key', 'replay'] as const) rows.push([kind, await timed(kind)]);

    // The baseline for a burst: 10 simultaneous creations without a key, one per account.
    const plainBursts: number[] = [];
    for (let b = 0; b < BURSTS; b++) {
      const headers: string[] = [];
      for (let i = 0; i < 10; i++) {
        used = 5;
        headers.push((await accountFor()).header);
      }
      const t0 = performance.now();
      const statuses = await Promise.all(
        headers.map((h) =>
          send(h).then(async (r) => {
            await r.arrayBuffer();
            return r.status;
          }),
        ),
      );
      plainBursts.push(performance.now() - t0);
      if (statuses.some((s) => s !== 201)) throw new Error(`plain burst ${b}: ${JSON.stringify(statuses)}`);
    }

    const bursts: number[] = [];
    for (let b = 0; b < BURSTS; b++) {
      used = 5; // a fresh account per burst, so its one task is the burst's
      const a = await accountFor();
      const key = `burst-${b}-${randomBytes(4).toString('hex')}`;
      const t0 = performance.now();
      const answers = await Promise.all(
        Array.from({ length: 10 }, () =>
          send(a.header, key).then(async (r) => ({ status: r.status, id: ((await r.json()) as { id: string }).id })),
        ),
      );
      bursts.push(performance.now() - t0);
      if (answers.some((r) => r.status !== 201) || new Set(answers.map((r) => r.id)).size !== 1) {
        throw new Error(`burst ${b}: ${JSON.stringify(answers.map((r) => r.status))}`);
      }
      const [made] = await db.select({ n: sql<number>`count(*)::int` }).from(tasks).where(eq(tasks.workspaceId, a.id));
      if (made!.n !== 1) throw new Error(`burst ${b}: ${made!.n} tasks`);
    }

    log(`\n${label}: ${REQUESTS} POST /v1/tasks of each kind, one at a time over 127.0.0.1 (ms)`);
    log('| kind | p50 | p99 | mean |');
    log('|---|---:|---:|---:|');
    for (const [kind, times] of rows) {
      log(
        `| ${kind} | ${ms(median(times))} | ${ms(percentile(times, 99))} ` +
          `| ${ms(times.reduce((s, t) => s + t, 0) / times.length)} |`,
      );
    }
    log(
      `| 10 simultaneous, no key, 10 accounts: 10 tasks (until all answered; ${BURSTS} bursts) ` +
        `| ${ms(median(plainBursts))} | ${ms(Math.max(...plainBursts))} (max) ` +
        `| ${ms(plainBursts.reduce((s, t) => s + t, 0) / plainBursts.length)} |`,
    );
    log(
      `| 10 simultaneous, one key: 1 task (until all 10 answered; ${BURSTS} bursts) | ${ms(median(bursts))} ` +
        `| ${ms(Math.max(...bursts))} (max) | ${ms(bursts.reduce((s, t) => s + t, 0) / bursts.length)} |`,
    );
    log(`every burst: ten 201s with one task id, one task row`);
  } finally {
    await app.close();
    await runtime.close();
    await host.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const cpus = os.cpus();
  log(`emend Idempotency-Key benchmark, ${new Date().toISOString()}`);
  log(
    `machine: ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${cpus.length} cores, Node ${process.version}; load ` +
      `average at start: ${loadAverage()}${pressure()}`,
  );
  await onEachDatabase(
    { pglite: 'PGlite (in process)', postgres: 'PostgreSQL (local cluster, fsync off)' },
    (label, database) => benchDatabase(label, database),
  );
  log(`load average at end: ${loadAverage()}`);
}

await main();
