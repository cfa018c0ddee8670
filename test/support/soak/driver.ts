import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAccount } from '../../../src/accounts/accounts.js';
import { systemClock } from '../../../src/clock.js';
import { CALC_REPO } from '../fix-script.js';
import { type Violation, checkInvariants, type Ledger } from './checks.js';
import { type Kind, promptFor, taskKinds } from './script.js';
import { type Services, startServices } from './services.js';

/** Previews one free account posts at most in a run (its plan allows 10 tasks a month). */
const FREE_POSTS = 6;

export interface SoakOptions {
  tasks: number;
  workers: number;
  apiNodes: number;
  /** SIGKILL a random worker every min..max ms, and start a new one; null: no kills. */
  killEveryMs: [number, number] | null;
  /** Stop killing after this many (default: no limit). */
  maxKills?: number;
  /** Halt PostgreSQL (as a crash) for this long once, after this share of the tasks were posted; null: never. */
  postgresRestart: { afterShare: number; downMs: number } | null;
  /** Share of each kind; the rest are plain pull-request runs. */
  mix: Partial<Record<Kind, number>>;
  /** Tasks in flight at once (posted and not yet terminal). */
  inFlight: number;
  staleMs: number;
  /** Only workers up this long are killed. */
  minWorkerUptimeMs: number;
  log: (line: string) => void;
  /** Gives up waiting for the tasks after this long. */
  timeoutMs: number;
  keepDir?: boolean;
}

export interface SoakReport {
  tasks: number;
  posted: number;
  statuses: Record<string, number>;
  /** Why tasks failed or were cancelled, with counts. */
  reasons: { status: string; reason: string; n: number }[];
  byKind: Record<string, Record<string, number>>;
  continued: number;
  /** Seconds from the first POST to the last finished_at. */
  wallS: number;
  tasksPerS: number;
  /** POST sent → finished_at, ms, of the tasks the driver posted (children of continue not included). */
  latencyMs: { p50: number; p99: number; max: number };
  kills: number;
  crashes: { name: string; code: number | null; signal: string | null }[];
  postgresDown?: { fromMs: number; toMs: number };
  http: {
    total: number;
    by5xx: Record<string, number>;
    unavailableInWindow: number;
    outside: { status: number; method: string; path: string; atMs: number; body: string }[];
  };
  /** Steps finished again by a later claim after their worker was killed or the database went away. */
  rerunsAfterKill: number;
  violations: Violation[];
  ledger: Ledger;
  dir: string;
}

const TERMINAL = new Set(['done', 'failed', 'cancelled']);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The fields of the API's answers the driver reads. */
interface Answer {
  id?: string;
  error?: string;
  task?: { status: string; finished_at: string | null };
}

interface Account {
  token: string;
  plan: 'scale' | 'free';
  active: number;
  posts: number[];
  /** Tasks this account created (refused POSTs, retried after a 429 or 503, do not count). */
  created: number;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Drives a deployment of real processes with fix tasks while it breaks things, then checks what
 * the database says. See bench/README.md ("Soak").
 */
export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const dir = mkdtempSync(join(tmpdir(), 'emend-soak-'));
  let keep = false;
  const s: Services = await startServices({
    dir,
    apiNodes: o.apiNodes,
    staleMs: o.staleMs,
    heartbeatMs: Math.max(200, Math.floor(o.staleMs / 5)),
    concurrency: 2,
  });
  const t0 = Date.now();
  const at = () => Date.now() - t0;
  try {
    for (let i = 0; i < o.workers; i++) s.startWorker();
    const kinds = taskKinds(o.tasks, o.mix);

    // Accounts: scale ones (5 active, 20 POSTs a minute each) for pull-request runs, free ones
    // (1 active, 10 a month) for previews; each connected to the fake GitHub through the API.
    const scaleCount = Math.max(2, Math.ceil(o.inFlight / 3));
    const previews = kinds.filter((k) => k === 'preview').length;
    // At most FREE_POSTS previews each (the free plan's 10 a month, with room to spare), so a
    // long run spreads them over enough accounts instead of meeting FREE_LIMIT_REACHED.
    const freeCount = previews ? Math.ceil(previews / FREE_POSTS) + 1 : 0;
    const accounts: Account[] = [];
    const logins: string[] = [];
    for (let i = 0; i < scaleCount + freeCount; i++) {
      const plan = i < scaleCount ? 'scale' : 'free';
      const { token } = await createAccount(
        { db: s.database.db, clock: systemClock },
        { email: `soak${i}@example.com`, plan, credits: plan === 'scale' ? 1000 : 10 },
      );
      const user = s.github.addUser(`soaker${i}`);
      logins.push(user.login);
      const res = await fetch(`${s.api[i % s.api.length]!.url}/v1/me/scm`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token.secret}`, 'content-type': 'application/json' },
        body: JSON.stringify({ token: user.token }),
      });
      if (res.status !== 200)
        throw new Error(`connecting soak${i} to the code host: ${res.status} ${await res.text()}`);
      accounts.push({ token: token.secret, plan, active: 0, posts: [], created: 0 });
    }
    const REPOS = ['calc0', 'calc1', 'calc2', 'calc3'];
    for (const name of REPOS) s.github.createRepo('acme', name, { files: CALC_REPO, collaborators: logins });

    // Every HTTP answer is recorded; a 5xx other than a 503 while the database is down is a failure.
    const http: SoakReport['http'] = { total: 0, by5xx: {}, unavailableInWindow: 0, outside: [] };
    let down: { fromMs: number; toMs?: number } | undefined;
    const GRACE_MS = 5_000;
    let rr = 0;
    const call = async (
      token: string,
      method: string,
      path: string,
      body?: unknown,
    ): Promise<{ status: number; json: Answer | undefined; headers: Headers } | undefined> => {
      const node = s.api[rr++ % s.api.length]!;
      let res: Response;
      try {
        res = await fetch(`${node.url}${path}`, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
          signal: AbortSignal.timeout(30_000),
        });
      } catch (err) {
        http.outside.push({ status: 0, method, path, atMs: at(), body: String((err as Error).cause ?? err) });
        return undefined;
      }
      http.total++;
      const text = await res.text();
      if (res.status >= 500) {
        const key = String(res.status);
        http.by5xx[key] = (http.by5xx[key] ?? 0) + 1;
        const inWindow = down && at() >= down.fromMs && at() <= (down.toMs ?? Infinity) + GRACE_MS;
        if (res.status === 503 && inWindow) http.unavailableInWindow++;
        else http.outside.push({ status: res.status, method, path, atMs: at(), body: text.slice(0, 300) });
      }
      let json: Answer | undefined;
      try {
        json = JSON.parse(text) as Answer;
      } catch {
        json = undefined;
      }
      return { status: res.status, json, headers: res.headers };
    };

    const latencies: number[] = [];
    const finishedAt: number[] = [];
    const byKind: Record<string, Record<string, number>> = {};
    const tally = (kind: string, outcome: string) => {
      const counts = byKind[kind] ?? {};
      byKind[kind] = counts;
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    };
    let posted = 0;
    let continued = 0;
    let firstPost = Infinity;

    const pickAccount = (plan: 'scale' | 'free'): Account | undefined => {
      const now = Date.now();
      const ok = accounts.filter(
        (a) =>
          a.plan === plan &&
          a.active < (plan === 'scale' ? 5 : 1) &&
          a.posts.filter((t) => now - t < 61_000).length < 20 &&
          (plan === 'scale' || a.created < FREE_POSTS),
      );
      return ok.sort((a, b) => a.active - b.active)[0];
    };

    /** Polls a task until it is terminal, approving its gates and killing it when told to. */
    const follow = async (acct: Account, id: string, killAfterMs: number | undefined, started: number) => {
      for (;;) {
        await sleep(300);
        const got = await call(acct.token, 'GET', `/v1/tasks/${id}`);
        if (got?.status !== 200) continue;
        const task = got.json!.task!;
        if (TERMINAL.has(task.status)) return task;
        if (task.status === 'awaiting_plan' || task.status === 'awaiting_diff') {
          await call(acct.token, 'POST', `/v1/tasks/${id}/approve`, {
            stage: task.status === 'awaiting_plan' ? 'plan' : 'diff',
          });
        }
        if (killAfterMs !== undefined && Date.now() - started > killAfterMs) {
          const k = await call(acct.token, 'POST', `/v1/tasks/${id}/kill`);
          if (k && (k.status === 200 || k.status === 409)) killAfterMs = undefined;
        }
      }
    };

    const one = async (n: number, kind: Kind) => {
      const plan = kind === 'preview' ? 'free' : 'scale';
      let acct: Account | undefined;
      let id: string | undefined;
      let started = 0;
      while (!id) {
        acct = pickAccount(plan);
        if (!acct) {
          await sleep(200);
          continue;
        }
        acct.active++;
        acct.posts.push(Date.now());
        started = Date.now();
        firstPost = Math.min(firstPost, started);
        const res = await call(acct.token, 'POST', '/v1/tasks', {
          prompt: promptFor(kind, n),
          repo_url: `${s.github.webUrl}/acme/${REPOS[n % REPOS.length]}`,
          ...(kind === 'manual' ? { approval_mode: 'manual' } : {}),
        });
        if (res?.status === 201) {
          id = res.json!.id!;
          acct.created++;
          break;
        }
        acct.active--;
        // 429 (the account's window or cap, seen by another node first) or 503: try again shortly.
        if (res && res.status !== 429 && res.status !== 503)
          throw new Error(`POST /v1/tasks answered ${res.status}: ${JSON.stringify(res.json)}`);
        await sleep(res?.status === 429 ? 500 : 1000);
      }
      posted++;
      const killAfter = kind === 'kill' ? 200 + ((n * 7919) % 4000) : undefined;
      const task = await follow(acct!, id, killAfter, started);
      const fin = Date.parse(task.finished_at!);
      latencies.push(fin - started);
      finishedAt.push(fin);
      tally(kind, task.status);
      // Every other preview that is done is promoted to a pull-request run.
      if (kind === 'preview' && task.status === 'done' && n % 2 === 0) {
        for (;;) {
          const scaleAcct = acct!;
          const res = await call(scaleAcct.token, 'POST', `/v1/tasks/${id}/continue`);
          if (res?.status === 201) {
            continued++;
            const child = await follow(scaleAcct, res.json!.id!, undefined, Date.now());
            finishedAt.push(Date.parse(child.finished_at!));
            tally('continue', child.status);
            break;
          }
          // A free account cannot continue without a credit (402): that is the product's rule, recorded.
          if (res && res.status !== 503) {
            tally('continue', `refused ${res.status} ${res.json?.error}`);
            break;
          }
          await sleep(1000);
        }
      }
      acct!.active--;
    };

    // Chaos: kill a random worker every few seconds and start a new one; halt PostgreSQL once.
    let stop = false;
    let kills = 0;
    const killedPids = new Set<number>();
    const chaos = (async () => {
      if (!o.killEveryMs) return;
      const [min, max] = o.killEveryMs;
      while (!stop && kills < (o.maxKills ?? Infinity)) {
        await sleep(min + Math.random() * (max - min));
        if (stop) break;
        // A worker is killed once it has had time to start and take tasks (on a busy machine a
        // worker process takes seconds to load), so the kills interrupt work rather than start-ups.
        const live = s.workers().filter((w) => Date.now() - w.startedAt >= o.minWorkerUptimeMs);
        const victim = live[Math.floor(Math.random() * live.length)];
        if (!victim) continue;
        killedPids.add(victim.child.pid!);
        await s.kill(victim);
        kills++;
        o.log(`${(at() / 1000).toFixed(1)} s: SIGKILL ${victim.name} (pid ${victim.child.pid})`);
        await sleep(300);
        s.startWorker();
      }
    })();

    // PostgreSQL halts once, as a crash would, when this share of the tasks has ended.
    const outage = (async () => {
      if (!o.postgresRestart) return;
      while (!stop && latencies.length < Math.floor(o.postgresRestart.afterShare * kinds.length)) await sleep(200);
      if (stop) return;
      down = { fromMs: at() };
      o.log(`${(at() / 1000).toFixed(1)} s: PostgreSQL halted (immediate shutdown)`);
      s.cluster.halt();
      await sleep(o.postgresRestart.downMs);
      s.cluster.resume();
      down.toMs = at();
      o.log(`${(at() / 1000).toFixed(1)} s: PostgreSQL running again`);
    })();

    let next = 0;
    const lanes = Array.from({ length: o.inFlight }, async () => {
      while (next < kinds.length) {
        const n = next++;
        await one(n, kinds[n]!);
        if (latencies.length % 25 === 0 || kinds.length <= 50)
          o.log(`${(at() / 1000).toFixed(1)} s: ${latencies.length} of ${kinds.length} tasks terminal, ${kills} kills`);
      }
    });
    const all = Promise.all(lanes);
    const timedOut = await Promise.race([all.then(() => false), sleep(o.timeoutMs).then(() => true)]);
    stop = true;
    await chaos;
    await outage;
    if (timedOut) o.log(`timed out after ${o.timeoutMs} ms with ${latencies.length} of ${kinds.length} tasks terminal`);

    // Tasks the driver does not follow (a POST answered 503 after the database took it) must end too.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await s.database.pool!.query(
        `select count(*)::int as n from tasks where status not in ('done', 'failed', 'cancelled')`,
      );
      if (rows[0].n === 0 || Date.now() > deadline) break;
      await sleep(500);
    }

    const checked = await checkInvariants(s.database.pool!);
    // A step done twice is allowed only when the first claim's worker was SIGKILLed (crash window).
    let rerunsAfterKill = 0;
    for (const dup of checked.finishedTwice) {
      const firstPid = Number(dup.workers[0]?.split('-')[0]);
      const firstAt = new Date(dup.first_at).getTime() - t0;
      const duringOutage =
        down !== undefined && firstAt >= down.fromMs - 2_000 && firstAt <= (down.toMs ?? Infinity) + GRACE_MS;
      if (killedPids.has(firstPid) || duringOutage) rerunsAfterKill++;
      else
        checked.violations.push({ check: 'step finished twice, the first worker alive', detail: JSON.stringify(dup) });
    }
    for (const c of s.crashes)
      checked.violations.push({ check: 'a process exited on its own', detail: JSON.stringify(c) });
    for (const h of http.outside)
      checked.violations.push({
        check: h.status === 0 ? 'request failed' : '5xx outside the database outage',
        detail: JSON.stringify(h),
      });

    keep = checked.violations.length > 0;
    const sorted = [...latencies].sort((a, b) => a - b);
    const wallS = (Math.max(...finishedAt) - firstPost) / 1000;
    return {
      tasks: kinds.length,
      posted,
      statuses: checked.statuses,
      reasons: checked.reasons,
      byKind,
      continued,
      wallS,
      tasksPerS: finishedAt.length / wallS,
      latencyMs: { p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN },
      kills,
      crashes: s.crashes.map((c) => ({ name: c.name, code: c.code, signal: c.signal })),
      postgresDown: down ? { fromMs: down.fromMs, toMs: down.toMs ?? NaN } : undefined,
      http,
      rerunsAfterKill,
      violations: checked.violations,
      ledger: checked.ledger,
      dir,
    };
  } finally {
    await s.close();
    // A run with a violation keeps its processes' logs (<dir>/logs/<name>.log) to find the cause.
    if (o.keepDir || keep) o.log(`kept ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  }
}
