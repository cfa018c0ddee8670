import { connect } from 'node:net';
import { and, count, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { grantCredits, ledgerBalance } from '../../src/billing/credits.js';
import { buildApp } from '../../src/app.js';
import { type Database, openPostgres, queryRows } from '../../src/db/client.js';
import { creditLedger, idempotencyKeys, taskPostAttempts, tasks } from '../../src/db/schema.js';
import { createMetrics } from '../../src/metrics/registry.js';
import { TASK_QUEUE } from '../../src/queue/task-queue.js';
import {
  CLAIM_LEASE_MS,
  IDEMPOTENCY_TTL_MS,
  claimKey,
  completeClaim,
  requestFingerprint,
  sweepExpiredKeys,
} from '../../src/tasks/idempotency-keys.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';
import { postgresUrlOf } from '../support/test-db.js';
import { recordingSteps } from '../support/engine.js';
import { startWorker } from '../../src/engine/worker.js';

let h: Harness;
let second: Awaited<ReturnType<typeof buildApp>>;
let secondDb: Database | undefined;
let urls: string[];

beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
  // A second API node on the same database: a key must hold across nodes, not per process.
  // On PostgreSQL it has a connection pool of its own, as a node on another machine would.
  const url = postgresUrlOf(h.database);
  secondDb = url ? openPostgres(url, { max: 10 }) : undefined;
  second = await buildApp({ ...h.deps, db: secondDb?.db ?? h.deps.db, metrics: createMetrics() });
  urls = [await h.app.listen({ port: 0, host: '127.0.0.1' }), await second.listen({ port: 0, host: '127.0.0.1' })];
});
afterAll(async () => {
  await second.close();
  await secondDb?.close();
  await h.close();
});

const REPO = 'https://github.com/psf/requests';
const body = (prompt = 'Fix the crash in Session.send') => ({ prompt, repo_url: REPO });

async function post(auth: Record<string, string>, payload: unknown, key?: string, url = '/v1/tasks') {
  return h.app.inject({
    method: 'POST',
    url,
    headers: { ...auth, ...(key === undefined ? {} : { 'idempotency-key': key }) },
    payload: payload as object,
  });
}

async function counts(accountId: string) {
  const [taskRows] = await h.deps.db.select({ n: count() }).from(tasks).where(eq(tasks.workspaceId, accountId));
  const [holds] = await h.deps.db
    .select({ n: count() })
    .from(creditLedger)
    .where(and(eq(creditLedger.workspaceId, accountId), eq(creditLedger.kind, 'hold')));
  const [posts] = await h.deps.db
    .select({ n: count() })
    .from(taskPostAttempts)
    .where(eq(taskPostAttempts.workspaceId, accountId));
  const [jobs] = await queryRows<{ n: number }>(
    h.deps.db,
    sql`select count(*)::int as n from pgboss.job j join tasks t on t.id::text = j.data->>'taskId' where j.name = ${TASK_QUEUE} and t.workspace_id = ${accountId}`,
  );
  return { tasks: taskRows!.n, holds: holds!.n, posts: posts!.n, jobs: jobs!.n };
}

describe('Idempotency-Key on POST /v1/tasks', () => {
  it('replays the first answer for the same key and body: same task and status, no second hold, count or job', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const first = await post(auth, body(), 'create-1');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });

    // The task moves on; the replay is still the first answer, as it was given.
    await forceStatus(h, eq(tasks.id, first.json().id), 'running');
    const again = await post(auth, body(), 'create-1');
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect(again.json().status).toBe('pending');
    expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(4);

    // Key order and the unprefixed alias do not make another request.
    const reordered = await post(
      auth,
      { repo_url: REPO, prompt: 'Fix the crash in Session.send' },
      'create-1',
      '/tasks',
    );
    expect(reordered.statusCode).toBe(201);
    expect(reordered.json().id).toBe(first.json().id);
    expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
  });

  it('does not count replays against the rate limit: 1 POST and 30 replays all answer 201', async () => {
    const { account, auth } = await newAccount(h, { plan: 'scale', credits: 5 });
    const codes = [];
    for (let i = 0; i < 31; i++) codes.push((await post(auth, body('rate limit and replays'), 'same-key')).statusCode);
    expect(codes).toEqual(Array(31).fill(201));
    expect((await counts(account.id)).posts).toBe(1);
  });

  it('answers 409 conflict naming the key when the key comes back with another body', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    expect((await post(auth, body('first body'), 'k-2')).statusCode).toBe(201);
    const other = await post(auth, body('another body'), 'k-2');
    expect(other.statusCode).toBe(409);
    expect(other.json()).toMatchObject({ error: 'conflict' });
    expect(other.json().message).toContain('Idempotency-Key "k-2"');
    expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
  });

  it('scopes keys per account: another account with the same key gets its own task', async () => {
    const a = await newAccount(h, { plan: 'pro', credits: 5 });
    const b = await newAccount(h, { plan: 'pro', credits: 5 });
    const ra = await post(a.auth, body(), 'shared-key');
    const rb = await post(b.auth, body(), 'shared-key');
    expect([ra.statusCode, rb.statusCode]).toEqual([201, 201]);
    expect(rb.json().id).not.toBe(ra.json().id);
    expect(rb.headers['idempotent-replayed']).toBeUndefined();
    expect(await counts(a.account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
    expect(await counts(b.account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
  });

  it('a key sent again with a token of another of the person’s workspaces is a reuse (409), never a replay of the first workspace’s task', async () => {
    const a = await newAccount(h, { plan: 'pro', credits: 5 });
    const team = await h.app.inject({
      method: 'POST',
      url: '/v1/workspaces',
      headers: a.auth,
      payload: { name: 'Team' },
    });
    expect(team.statusCode, team.body).toBe(201);
    const minted = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: a.auth,
      payload: { workspace_id: team.json().id },
    });
    const teamAuth = { authorization: `Bearer ${minted.json().token}` };
    const first = await post(a.auth, body('one key, two workspaces'), 'ws-key');
    expect(first.statusCode).toBe(201);
    const again = await post(teamAuth, body('one key, two workspaces'), 'ws-key');
    expect(again.statusCode, again.body).toBe(409);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(await counts(team.json().id)).toMatchObject({ tasks: 0 });
  });

  it('forgets a key after 24 h (the injectable clock) and the sweep deletes it', async () => {
    const { account, auth } = await newAccount(h, { plan: 'scale', credits: 5 });
    const first = await post(auth, body('expiry'), 'day-key');
    h.clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    expect((await post(auth, body('expiry'), 'day-key')).json().id).toBe(first.json().id);
    h.clock.advance(1000);
    const later = await post(auth, body('expiry'), 'day-key');
    expect(later.statusCode).toBe(201);
    expect(later.json().id).not.toBe(first.json().id);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await counts(account.id)).toMatchObject({ tasks: 2, holds: 2, jobs: 2 });
    // after expiry a new body is no conflict either: the old answer is gone
    h.clock.advance(IDEMPOTENCY_TTL_MS);
    await forceStatus(h, eq(tasks.workspaceId, account.id), 'done');
    expect((await post(auth, body('expiry, new body'), 'day-key')).statusCode).toBe(201);
    // the sweep deletes what has expired and keeps what has not
    h.clock.advance(IDEMPOTENCY_TTL_MS - 1000);
    await post(auth, body('kept by the sweep'), 'fresh-key');
    h.clock.advance(1000);
    await sweepExpiredKeys(h.deps);
    const left = await h.deps.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.accountId, account.id));
    expect(left).toEqual([{ key: 'fresh-key' }]);
  });

  it('stores nothing for a refused request: the key can be used again once the request is fixed', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 0 });
    const invalid = await post(auth, { prompt: 'ab', repo_url: REPO }, 'retry-me');
    expect(invalid.statusCode).toBe(400);
    const noCredits = await post(auth, body(), 'retry-me');
    expect(noCredits.statusCode).toBe(402);
    expect(noCredits.json().error).toBe('NO_CREDITS');
    await grantCredits(h.deps.db, account.id, 1, h.clock.now());
    const ok = await post(auth, body(), 'retry-me');
    expect(ok.statusCode).toBe(201);
    expect(ok.headers['idempotent-replayed']).toBeUndefined();
    const rows = await h.deps.db.select().from(idempotencyKeys).where(eq(idempotencyKeys.accountId, account.id));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ key: 'retry-me', responseStatus: 201, taskId: ok.json().id });
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a tab', 'a\tb'],
    ['non-ASCII', 'clé'],
  ])('refuses a key that is %s with 400 naming the header, creating nothing', async (_what, key) => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const res = await post(auth, body(), key);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'bad_request' });
    expect(res.json().message).toMatch(/^Idempotency-Key: /);
    expect(await counts(account.id)).toEqual({ tasks: 0, holds: 0, posts: 0, jobs: 0 });
  });

  it('accepts 1 and 255 printable characters, spaces and quotes included', async () => {
    const { auth } = await newAccount(h, { plan: 'scale', credits: 5 });
    for (const key of ['x', '~'.repeat(255), '"8e03978e-40d5-43e8-bc93-6894a57f9324"', 'a key with spaces']) {
      const res = await post(auth, body(`key ${key.length}`), key);
      expect(res.statusCode, key).toBe(201);
      await forceStatus(h, eq(tasks.id, res.json().id), 'done');
    }
  });

  it('refuses the header sent twice, over real HTTP', async () => {
    const { token } = await newAccount(h, { plan: 'pro', credits: 5 });
    // fetch would join repeated values into one field ("a, b"), itself a valid key: write the request by hand
    const payload = JSON.stringify(body());
    const { port } = new URL(urls[0]!);
    const raw = await new Promise<string>((resolve, reject) => {
      // written, not ended: the server closes after its answer (Connection: close)
      const socket = connect(Number(port), '127.0.0.1', () =>
        socket.write(
          `POST /v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\nContent-Type: ` +
            `application/json\r\n` +
            (`Idempotency-Key: a\r\nidempotency-key: ` +
              `b\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nConnection: close\r\n\r\n${payload}`),
        ),
      );
      let text = '';
      socket.on('data', (c) => (text += c));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(raw).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).message).toBe('Idempotency-Key: send the header once');
  });

  it('shows the header in the OpenAPI document', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi-public.json' })).json();
    for (const path of ['/v1/tasks', '/v1/tasks/{id}/continue']) {
      const params = doc.paths[path].post.parameters as { in: string; name: string }[];
      expect(
        params.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key'),
        path,
      ).toBe(true);
    }
  });
});

describe('concurrent duplicates over real HTTP, across two API nodes', () => {
  it('10 simultaneous POSTs with one key: one task, one hold, one count, one job; all 10 answer the same', async () => {
    const { account, token } = await newAccount(h, { plan: 'scale', credits: 5 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${urls[i % 2]}/v1/tasks`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': 'burst' },
          body: JSON.stringify(body('ten at once')),
        }).then(async (r) => ({
          status: r.status,
          body: await r.json(),
          replayed: r.headers.get('idempotent-replayed'),
        })),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    for (const r of results) expect(r.body).toEqual(results[0]!.body);
    expect(results.filter((r) => r.replayed === null)).toHaveLength(1);
    expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(4);
  });

  it('10 simultaneous POSTs with one key, half with another body: one task; the other body gets 409', async () => {
    const { account, token } = await newAccount(h, { plan: 'scale', credits: 5 });
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${urls[i % 2]}/v1/tasks`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'idempotency-key': 'two-bodies',
          },
          body: JSON.stringify(body(i < 5 ? 'body one' : 'body two')),
        }).then(async (r) => ({ status: r.status, body: await r.json() })),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    expect(created).toHaveLength(5);
    expect(new Set(created.map((r) => r.body.prompt)).size).toBe(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(5);
    expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
  });
});

describe('a request in flight, and one that died', () => {
  it('answers 409 "in progress" after waiting for a live claim, and takes over a claim abandoned past its lease', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    // A node whose duplicates wait 300 ms (EMEND_IDEMPOTENCY_WAIT_MS) rather than the default 8 s.
    const impatient = await buildApp({
      ...h.deps,
      config: { ...h.deps.config, idempotencyWaitMs: 300 },
      metrics: createMetrics(),
    });
    try {
      // A request that claimed the key and never answered (its process was killed).
      const fingerprint = requestFingerprint(account.id, {}, body('died'));
      expect(
        (await claimKey(h.deps, { accountId: account.id, route: 'tasks.create', key: 'orphan', fingerprint })).kind,
      ).toBe('claimed');
      const started = performance.now();
      const busy = await impatient.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: { ...auth, 'idempotency-key': 'orphan' },
        payload: body('died'),
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(200);
      expect(busy.statusCode).toBe(409);
      expect(busy.json().message).toBe(
        'a request with Idempotency-Key "orphan" is in progress; retry when it has answered',
      );
      expect(busy.headers['retry-after']).toBe('1');
      expect(await counts(account.id)).toEqual({ tasks: 0, holds: 0, posts: 0, jobs: 0 });
      h.clock.advance(CLAIM_LEASE_MS);
      const taken = await impatient.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: { ...auth, 'idempotency-key': 'orphan' },
        payload: body('died'),
      });
      expect(taken.statusCode).toBe(201);
      expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
    } finally {
      await impatient.close();
    }
  });

  it('makes a duplicate wait for the request in flight and answer with its answer', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const fingerprint = requestFingerprint(account.id, {}, body('in flight'));
    const held = await claimKey(h.deps, { accountId: account.id, route: 'tasks.create', key: 'flight', fingerprint });
    if (held.kind !== 'claimed') throw new Error('the key should have been free');
    let answered = false;
    const duplicate = post(auth, body('in flight'), 'flight').finally(() => (answered = true));
    // the request holding the claim answers while the duplicate waits
    const task = (await post(auth, body('a task for the held claim to answer with'))).json();
    expect(answered).toBe(false);
    await h.deps.db.transaction((tx) => completeClaim(tx, held.claim, { status: 201, body: task, taskId: task.id }));
    const res = await duplicate;
    expect(res.statusCode).toBe(201);
    expect(res.headers['idempotent-replayed']).toBe('true');
    expect(res.json()).toEqual(task);
    expect(await counts(account.id)).toEqual({ tasks: 1, holds: 1, posts: 1, jobs: 1 });
  });
});

describe('a claim taken over while its request was still running', () => {
  it('cannot store its answer: the transaction that would create its task fails and rolls back', async () => {
    const { account, auth } = await newAccount(h, { plan: 'scale', credits: 5 });
    const task = (await post(auth, body('a task to point at'))).json();
    const req = {
      accountId: account.id,
      route: 'tasks.create' as const,
      key: 'slow',
      fingerprint: requestFingerprint(account.id, {}, body('slow')),
    };
    const slow = await claimKey(h.deps, req);
    h.clock.advance(CLAIM_LEASE_MS);
    const fast = await claimKey(h.deps, req);
    if (slow.kind !== 'claimed' || fast.kind !== 'claimed') throw new Error('both claims should have been granted');
    await expect(
      h.deps.db.transaction((tx) =>
        completeClaim(tx, slow.claim, { status: 201, body: { id: 'slow' }, taskId: task.id }),
      ),
    ).rejects.toMatchObject({ code: 'conflict' });
    await h.deps.db.transaction((tx) =>
      completeClaim(tx, fast.claim, { status: 201, body: { id: 'fast' }, taskId: task.id }),
    );
    const replay = await claimKey(h.deps, req);
    expect(replay).toEqual({ kind: 'replay', status: 201, body: { id: 'fast' } });
  });
});

describe('Idempotency-Key on POST /v1/tasks/{id}/continue', () => {
  async function donePreview() {
    const acct = await newAccount(h, { plan: 'free', credits: 5 });
    const parent = await post(acct.auth, body('a preview to promote'));
    expect(parent.json().mode).toBe('preview');
    await forceStatus(h, eq(tasks.id, parent.json().id), 'done');
    return { ...acct, parentId: parent.json().id as string };
  }
  const cont = (auth: Record<string, string>, id: string, key?: string) =>
    h.app.inject({
      method: 'POST',
      url: `/v1/tasks/${id}/continue`,
      headers: { ...auth, ...(key ? { 'idempotency-key': key } : {}) },
    });

  it('replays the child task: one child, one hold, one job', async () => {
    const { account, auth, parentId } = await donePreview();
    const first = await cont(auth, parentId, 'promote');
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ parent_id: parentId, mode: 'pr' });
    const again = await cont(auth, parentId, 'promote');
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    // parent + one child; the parent (preview) held nothing
    expect(await counts(account.id)).toMatchObject({ tasks: 2, holds: 1, jobs: 2 });
    // without a key a second continue is a second request, as before
    const [child] = await h.deps.db.select({ n: count() }).from(tasks).where(eq(tasks.parentId, parentId));
    expect(child!.n).toBe(1);
  });

  it('scopes keys per route; the same key on another task is another request (409)', async () => {
    const { auth, parentId } = await donePreview();
    const made = await post(auth, body('the create that used the key first'), 'per-route');
    expect(made.statusCode).toBe(201);
    await forceStatus(h, eq(tasks.id, made.json().id), 'done');
    const promoted = await cont(auth, parentId, 'per-route');
    expect(promoted.statusCode).toBe(201);
    expect(promoted.json().id).not.toBe(made.json().id);
    expect(promoted.json().parent_id).toBe(parentId);
    const other = await cont(auth, made.json().id, 'per-route');
    expect(other.statusCode).toBe(409);
    expect(other.json().message).toContain('Idempotency-Key "per-route"');
  });

  it('10 simultaneous continues with one key over real HTTP: one child task, one hold, one job', async () => {
    const { account, token, parentId } = await donePreview();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        fetch(`${urls[i % 2]}/v1/tasks/${parentId}/continue`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'promote-burst' },
        }).then(async (r) => ({ status: r.status, body: await r.json() })),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await counts(account.id)).toMatchObject({ tasks: 2, holds: 1, jobs: 2 });
  });
});

describe('worker maintenance', () => {
  it('deletes the keys whose 24 h are over and keeps the others', async () => {
    const { account, auth } = await newAccount(h, { plan: 'scale', credits: 5 });
    await post(auth, body('swept by maintenance'), 'old');
    h.clock.advance(IDEMPOTENCY_TTL_MS);
    await post(auth, body('kept by maintenance'), 'new');
    // no consumers: this worker only does its maintenance pass
    const worker = await startWorker(h.deps, recordingSteps().steps, { concurrency: 0, maintenanceMs: 3600_000 });
    try {
      await worker.maintain();
    } finally {
      await worker.stop();
    }
    const left = await h.deps.db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(eq(idempotencyKeys.accountId, account.id));
    expect(left).toEqual([{ key: 'new' }]);
  });
});
