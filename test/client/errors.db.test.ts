import { randomUUID } from 'node:crypto';
import {
  AuthenticationError,
  BadRequestError,
  ConflictError,
  EmendError,
  ForbiddenError,
  NetworkError,
  NotFoundError,
  PaymentRequiredError,
  PreconditionFailedError,
  RateLimitError,
  type Task,
  createClient,
} from '@emend/client';
import { eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { TASK_POSTS_PER_WINDOW } from '../../src/tasks/rate-limit.js';
import { type CuttingProxy, startCuttingProxy } from '../support/cutting-proxy.js';
import { freePort } from '../support/ports.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// Each error family of @emend/client from the real service on a real port (no worker: tasks stay
// pending), the retries on 429 and on broken connections, through a proxy that loses answers.
let h: Harness;
let baseUrl: string;
let proxy: CuttingProxy | undefined;

beforeAll(async () => {
  h = await startHarness({}, { scm: 'fake' });
  baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
});
afterAll(() => h.close());

/** A paid account connected to the fake GitHub, with a public repository it may run tasks on. */
async function paidAccount(opts: { credits?: number; scm?: boolean } = {}) {
  const owner = await newAccount(h, { plan: 'pro', credits: opts.credits ?? 5, scm: opts.scm });
  const name = `repo-${randomUUID().slice(0, 8)}`;
  h.github.createRepo('acme', name, { collaborators: owner.scm ? [owner.scm.login] : [] });
  return { ...owner, repoUrl: `${h.github.webUrl}/acme/${name}` };
}

/** The error a call rejected with (the test fails if it resolved). */
async function failure(call: Promise<unknown>): Promise<EmendError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(EmendError);
  return err as EmendError;
}

const tasksOf = async (accountId: string) => h.deps.db.select().from(tasks).where(eq(tasks.workspaceId, accountId));

describe('@emend/client: typed errors', () => {
  it('400: a body the schema refuses is a BadRequestError with the code, message and request id', async () => {
    const owner = await paidAccount();
    const err = await failure(createClient({ baseUrl, token: owner.token }).createTask({ prompt: 'x' }));
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err).toMatchObject({ status: 400, code: 'bad_request', retryAfter: undefined });
    expect(err.message).toMatch(/prompt/);
    expect(err.requestId).toMatch(/\S/);
  });

  it('401: no token, or an unknown one, is an AuthenticationError', async () => {
    const none = await failure(createClient({ baseUrl }).GET('/v1/me'));
    expect(none).toBeInstanceOf(AuthenticationError);
    expect(none).toMatchObject({ status: 401, code: 'unauthorized' });
    const unknown = await failure(createClient({ baseUrl, token: `tk_${'0'.repeat(40)}` }).GET('/v1/me'));
    expect(unknown).toBeInstanceOf(AuthenticationError);
    expect(unknown).toMatchObject({ status: 401, code: 'invalid_token' });
  });

  it('403: an admin endpoint for a user is a ForbiddenError', async () => {
    const owner = await paidAccount();
    const err = await failure(createClient({ baseUrl, token: owner.token }).GET('/v1/admin/accounts'));
    expect(err).toBeInstanceOf(ForbiddenError);
    expect(err).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it("404: another account's task is a NotFoundError", async () => {
    const owner = await paidAccount();
    const stranger = await paidAccount();
    const task = await createClient({ baseUrl, token: owner.token }).createTask({
      prompt: 'fix the thing',
      repo_url: owner.repoUrl,
    });
    const err = await failure(createClient({ baseUrl, token: stranger.token }).getTask(task.id));
    expect(err).toBeInstanceOf(NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('409: an Idempotency-Key sent again with another body is a ConflictError', async () => {
    const owner = await paidAccount();
    const client = createClient({ baseUrl, token: owner.token });
    const idempotencyKey = randomUUID();
    await client.createTask({ prompt: 'first request', repo_url: owner.repoUrl }, { idempotencyKey });
    const err = await failure(
      client.createTask({ prompt: 'another request', repo_url: owner.repoUrl }, { idempotencyKey }),
    );
    expect(err).toBeInstanceOf(ConflictError);
    expect(err).toMatchObject({ status: 409, code: 'conflict' });
  });

  it('412: a pull-request task without a connected code host is a PreconditionFailedError', async () => {
    const owner = await paidAccount({ scm: false });
    const err = await failure(
      createClient({ baseUrl, token: owner.token }).createTask({ prompt: 'fix it', repo_url: owner.repoUrl }),
    );
    expect(err).toBeInstanceOf(PreconditionFailedError);
    expect(err).toMatchObject({ status: 412, code: 'scm_not_connected' });
  });

  it('402: no credits left is a PaymentRequiredError', async () => {
    const owner = await paidAccount({ credits: 0 });
    const err = await failure(
      createClient({ baseUrl, token: owner.token }).createTask({ prompt: 'fix it', repo_url: owner.repoUrl }),
    );
    expect(err).toBeInstanceOf(PaymentRequiredError);
    expect(err).toMatchObject({ status: 402, code: 'NO_CREDITS' });
  });
});

/** Uses up the account's task-creation window with refused posts (each counts; none creates a task). */
async function fillRateWindow(token: string) {
  const client = createClient({ baseUrl, token, retries: 0 });
  for (let i = 0; i < TASK_POSTS_PER_WINDOW; i++)
    expect(await failure(client.createTask({ prompt: '' }))).toBeInstanceOf(BadRequestError);
}

describe('@emend/client: retries', () => {
  it('429: with retries off, a RateLimitError carrying retry_after', async () => {
    const owner = await paidAccount();
    await fillRateWindow(owner.token);
    const client = createClient({ baseUrl, token: owner.token, retries: 0 });
    const err = await failure(client.createTask({ prompt: 'one more', repo_url: owner.repoUrl }));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(err.retryAfter).toBeGreaterThan(0);
    expect(err.retryAfter).toBeLessThanOrEqual(60);
    expect(await tasksOf(owner.account.id)).toHaveLength(0);
  });

  it('429: waits the Retry-After, then the same call succeeds', async () => {
    const owner = await paidAccount();
    await fillRateWindow(owner.token);
    const waits: number[] = [];
    // The server's rate limit reads the harness's clock: waiting is moving it.
    const sleep = async (ms: number) => {
      waits.push(ms);
      h.clock.advance(ms);
    };
    const client = createClient({ baseUrl, token: owner.token, sleep });
    const task = await client.createTask({ prompt: 'after the wait', repo_url: owner.repoUrl });
    expect(task.status).toBe('pending');
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThan(0);
    expect(await tasksOf(owner.account.id)).toHaveLength(1);
  });

  it('429: a Retry-After longer than maxRetryWaitMs is not waited for', async () => {
    const owner = await paidAccount();
    await fillRateWindow(owner.token);
    const waits: number[] = [];
    const client = createClient({
      baseUrl,
      token: owner.token,
      maxRetryWaitMs: 500,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(await failure(client.createTask({ prompt: 'no wait', repo_url: owner.repoUrl }))).toBeInstanceOf(
      RateLimitError,
    );
    expect(waits).toEqual([]);
  });

  it('429 CONCURRENT_LIMIT: waits its Retry-After while a task is stopped, then the create succeeds', async () => {
    const owner = await paidAccount();
    const plain = createClient({ baseUrl, token: owner.token });
    // No worker runs here, so these stay active: the plan's 3 concurrent tasks.
    const active: Task[] = [];
    for (let i = 0; i < 3; i++) active.push(await plain.createTask({ prompt: `task ${i}`, repo_url: owner.repoUrl }));
    const waits: number[] = [];
    const refused = createClient({ baseUrl, token: owner.token, sleep: async (ms) => void waits.push(ms) });
    const err = await failure(refused.createTask({ prompt: 'a fourth', repo_url: owner.repoUrl }));
    expect(err).toBeInstanceOf(RateLimitError);
    expect(err).toMatchObject({ code: 'CONCURRENT_LIMIT', retryAfter: 5 });
    expect(waits).toEqual([5_000, 5_000, 5_000]);

    const patient = createClient({
      baseUrl,
      token: owner.token,
      sleep: async () => {
        await plain.POST('/v1/tasks/{id}/kill', { params: { path: { id: active[0]!.id } } });
      },
    });
    const fourth = await patient.createTask({ prompt: 'a fourth', repo_url: owner.repoUrl });
    expect(fourth.status).toBe('pending');
  });

  it('a create whose answer is lost is sent again with the same Idempotency-Key: one task', async () => {
    const owner = await paidAccount();
    let lose = 1;
    proxy = await startCuttingProxy(baseUrl, { loseAnswer: (req) => req.method === 'POST' && lose-- > 0 });
    const client = createClient({ baseUrl: proxy.url, token: owner.token, sleep: async () => {} });
    const task = await client.createTask({ prompt: 'exactly once', repo_url: owner.repoUrl });
    expect(proxy.lost).toEqual(['POST /v1/tasks']);
    const posts = proxy.seen.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[0]!.key).toMatch(/^[0-9a-f-]{36}$/);
    expect(posts[1]!.key).toBe(posts[0]!.key);
    const rows = await tasksOf(owner.account.id);
    expect(rows.map((r) => r.id)).toEqual([task.id]);
  });

  it('a GET whose answer is lost is sent again', async () => {
    const owner = await paidAccount();
    let lose = 1;
    proxy = await startCuttingProxy(baseUrl, { loseAnswer: () => lose-- > 0 });
    const waits: number[] = [];
    const client = createClient({ baseUrl: proxy.url, token: owner.token, sleep: async (ms) => void waits.push(ms) });
    expect((await client.GET('/v1/me')).email).toBe(owner.account.email);
    expect(proxy.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /v1/me', 'GET /v1/me']);
    // One back-off, of the first size: between half and all of the base delay (250 ms).
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(125);
    expect(waits[0]).toBeLessThanOrEqual(250);
  });

  it('a POST without an Idempotency-Key is not sent again: a NetworkError', async () => {
    const owner = await paidAccount();
    const task = await createClient({ baseUrl, token: owner.token }).createTask({
      prompt: 'to be killed',
      repo_url: owner.repoUrl,
    });
    proxy = await startCuttingProxy(baseUrl, { loseAnswer: () => true });
    const client = createClient({ baseUrl: proxy.url, token: owner.token, sleep: async () => {} });
    const err = await failure(client.POST('/v1/tasks/{id}/kill', { params: { path: { id: task.id } } }));
    expect(err).toBeInstanceOf(NetworkError);
    expect(err).toMatchObject({ status: 0, code: 'network' });
    expect(proxy.seen).toHaveLength(1);
  });
});

describe('@emend/client: followTask, apart from a run', () => {
  it("a stranger's task is a NotFoundError at once, with no reconnection", async () => {
    const owner = await paidAccount();
    const stranger = await paidAccount();
    const task = await createClient({ baseUrl, token: owner.token }).createTask({
      prompt: 'mine',
      repo_url: owner.repoUrl,
    });
    const waits: number[] = [];
    const client = createClient({ baseUrl, token: stranger.token, sleep: async (ms) => void waits.push(ms) });
    const err = await failure(client.followTask(task.id).next());
    expect(err).toBeInstanceOf(NotFoundError);
    expect(waits).toEqual([]);
  });

  it('stops when its signal aborts: rejects with the reason', async () => {
    const owner = await paidAccount();
    const client = createClient({ baseUrl, token: owner.token });
    // No worker runs here: the task stays pending and its stream stays open.
    const task = await client.createTask({ prompt: 'never runs', repo_url: owner.repoUrl });
    const stop = new AbortController();
    const seen: string[] = [];
    const reason = new Error('the caller stopped');
    const following = (async () => {
      for await (const event of client.followTask(task.id, { signal: stop.signal })) {
        seen.push(event.type);
        if (event.type === 'state') stop.abort(reason);
      }
    })();
    await expect(following).rejects.toBe(reason);
    expect(seen).toEqual(['connected', 'state']);
  });

  it("waits the server's retry: before reconnecting", async () => {
    const owner = await paidAccount();
    const task = await createClient({ baseUrl, token: owner.token }).createTask({
      prompt: 'cut me',
      repo_url: owner.repoUrl,
    });
    proxy = await startCuttingProxy(baseUrl, { streamPrefix: 'retry: 250\n\n', streamCuts: [0] });
    const waits: number[] = [];
    const client = createClient({ baseUrl: proxy.url, token: owner.token, sleep: async (ms) => void waits.push(ms) });
    const seen: string[] = [];
    for await (const event of client.followTask(task.id)) {
      seen.push(event.type);
      if (proxy.streams.length === 2) break;
    }
    expect(waits).toEqual([250]);
    // The cut came inside the first event: `connected` was received once, from the second connection.
    expect(seen).toEqual(['connected']);
  });

  it('gives up after maxReconnects failed connections in a row, waiting twice as long each time', async () => {
    const waits: number[] = [];
    const closed = `http://127.0.0.1:${await freePort()}`;
    const client = createClient({ baseUrl: closed, token: 'tk_x', sleep: async (ms) => void waits.push(ms) });
    const err = await failure(client.followTask(randomUUID(), { maxReconnects: 3 }).next());
    expect(err).toBeInstanceOf(NetworkError);
    expect(waits).toEqual([1_000, 2_000, 4_000]);
  });
});
