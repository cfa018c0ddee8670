import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { openPostgres, runMigrations } from '../../../src/db/client.js';
import { spawnEmend } from '../emend-process.js';
import { type FakeGitHub, startFakeGitHub } from '../fake-github/server.js';
import { type Cluster, findPostgresBin, startCluster } from '../postgres-cluster.js';
import { freePort } from '../ports.js';
import { type ScriptedModel, startScriptedModel } from '../scripted-model/server.js';
import { scriptSoak } from './script.js';

const MODEL_KEY = 'sk-soak-managed-0123456789';

export interface Proc {
  name: string;
  child: ChildProcess;
  /** Set when the driver killed it on purpose. */
  killed: boolean;
  startedAt: number;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** What exited without the driver asking: a crash the run must report. */
export interface Crash {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
  at: number;
}

/**
 * The deployment under test, all real processes: a PostgreSQL cluster (crash-safe commits),
 * `emend serve --no-worker` API nodes and `emend worker` processes started from source, the
 * fake GitHub and the scripted model in this process.
 */
export async function startServices(opts: {
  dir: string;
  apiNodes: number;
  staleMs: number;
  heartbeatMs: number;
  concurrency: number;
}) {
  const bin = findPostgresBin();
  if (!bin) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql: the soak runs on PostgreSQL');
  const cluster: Cluster = await startCluster(bin, { crashSafe: true });
  const admin = new pg.Client({ connectionString: cluster.url('postgres') });
  await admin.connect();
  await admin.query('create database soak');
  await admin.end();
  const url = cluster.url('soak');
  const database = openPostgres(url, { max: 4 });
  await runMigrations(database);

  const github: FakeGitHub = await startFakeGitHub();
  const model: ScriptedModel = await startScriptedModel({ validKeys: [MODEL_KEY] });
  scriptSoak(model);

  mkdirSync(join(opts.dir, 'logs'), { recursive: true });
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    DATABASE_URL: url,
    EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
    EMEND_SCM_API_URL: github.apiUrl,
    EMEND_SCM_WEB_URL: github.webUrl,
    OPENAI_API_KEY: MODEL_KEY,
    OPENAI_BASE_URL: model.urls.openai,
    EMEND_LLM_RETRY_BASE_MS: '10',
    EMEND_WORKER_STALE_MS: String(opts.staleMs),
    EMEND_WORKER_HEARTBEAT_MS: String(opts.heartbeatMs),
    EMEND_WORKER_CONCURRENCY: String(opts.concurrency),
    LOG_LEVEL: 'warn',
  };
  const crashes: Crash[] = [];
  const all: Proc[] = [];
  let seq = 0;

  const start = (name: string, args: string[], dataDir: string): Proc => {
    const child = spawnEmend(args, { ...env, EMEND_DATA_DIR: dataDir });
    const log = createWriteStream(join(opts.dir, 'logs', `${name}.log`));
    child.stdout!.pipe(log);
    child.stderr!.pipe(log);
    const proc: Proc = {
      name,
      child,
      killed: false,
      startedAt: Date.now(),
      exited: new Promise((res) => child.once('exit', (code, signal) => res({ code, signal }))),
    };
    void proc.exited.then(({ code, signal }) => {
      if (!proc.killed) crashes.push({ name, code, signal, at: Date.now() });
    });
    all.push(proc);
    return proc;
  };

  // The driver interrupted (Ctrl-C, a timeout): nothing it started may outlive it.
  const onSignal = () => {
    for (const p of all) p.child.kill('SIGKILL');
    cluster.stop();
    process.exit(130);
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  /**
   * Stops every process (SIGTERM, then SIGKILL after graceMs; SIGKILL at once with 0) and the
   * services under them.
   */
  const stopAll = async (graceMs: number) => {
    await Promise.all(
      all.map(async (p) => {
        p.killed = true;
        if (p.child.exitCode !== null || p.child.signalCode !== null) return;
        p.child.kill(graceMs > 0 ? 'SIGTERM' : 'SIGKILL');
        const t = setTimeout(() => p.child.kill('SIGKILL'), graceMs);
        await p.exited;
        clearTimeout(t);
      }),
    );
    await database.close().catch(() => {});
    await github.close();
    await model.close();
    cluster.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  };

  const api: { url: string; proc: Proc }[] = [];
  for (let i = 0; i < opts.apiNodes; i++) {
    const port = await freePort();
    const proc = start(
      `api${i + 1}`,
      ['serve', '--no-worker', '--host', '127.0.0.1', '--port', String(port)],
      join(opts.dir, `api${i + 1}`),
    );
    api.push({ url: `http://127.0.0.1:${port}`, proc });
  }
  try {
    for (const node of api) await waitForHealth(node.url, node.proc);
  } catch (err) {
    await stopAll(0);
    throw err;
  }

  // Workers of one machine share a data dir (mirrors under flock, checkouts per task).
  const workers: Proc[] = [];
  const startWorker = () => {
    const proc = start(`worker${++seq}`, ['worker'], join(opts.dir, 'workers'));
    workers.push(proc);
    return proc;
  };

  return {
    cluster,
    database,
    github,
    model,
    api,
    crashes,
    workers: () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null),
    startWorker,
    async kill(proc: Proc, signal: NodeJS.Signals = 'SIGKILL') {
      proc.killed = true;
      if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal);
      await proc.exited;
    },
    async close() {
      // Workers and nodes stop as an operator stops them (SIGTERM), then anything left is killed.
      await stopAll(10_000);
    },
  };
}

export type Services = Awaited<ReturnType<typeof startServices>>;

async function waitForHealth(url: string, proc: Proc, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited (${proc.child.exitCode}) before it was up`);
    try {
      if ((await fetch(`${url}/health`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${proc.name} not healthy after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
