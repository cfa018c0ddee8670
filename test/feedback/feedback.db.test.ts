import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskFeedback } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { insertTasks, taskRow } from './seed.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function doneTask(accountId: string, over: Parameters<typeof taskRow>[2] = {}) {
  const row = taskRow(accountId, Math.floor(Math.random() * 1000), over);
  await insertTasks(h.deps.db, [row]);
  return row.id!;
}

const post = (auth: Record<string, string>, id: string, payload?: unknown) =>
  h.app.inject({
    method: 'POST',
    url: `/v1/tasks/${id}/feedback`,
    headers: auth,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });

describe('POST /v1/tasks/{id}/feedback: validation', () => {
  it('answers 400 bad_request naming the field for every value out of range, and takes the bounds', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    const id = await doneTask(account.id);
    const bad: [unknown, string][] = [
      [{ rating: -1 }, 'rating'],
      [{ rating: 6 }, 'rating'],
      [{ rating: 2.5 }, 'rating'],
      [{ rating: '3' }, 'rating'],
      [{ rating: null }, 'rating'],
      [{ correct: 'maybe' }, 'correct'],
      [{ correct: 'YES' }, 'correct'],
      [{ reuse: 'partial' }, 'reuse'],
      [{ reuse: true }, 'reuse'],
      [{ note: 'x'.repeat(4001) }, 'note'],
      [{ note: 42 }, 'note'],
      [{ rating: 3, stars: 5 }, 'stars'],
      [{ note: 'a\u0000b' }, 'note'],
      [{ note: 'a\ud800b' }, 'note'],
      [[], 'body'],
    ];
    for (const [payload, field] of bad) {
      const res = await post(auth, id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error).toBe('bad_request');
      expect(res.json().message.startsWith(`${field}:`), `${JSON.stringify(payload)} → ${res.json().message}`).toBe(
        true,
      );
    }
    // every field is optional: {} and no body at all change nothing and answer the (empty) feedback, writing no row
    for (const res of [await post(auth, id, {}), await post(auth, id)]) {
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        task_id: id,
        rating: null,
        correct: null,
        reuse: null,
        note: null,
        history_count: 0,
      });
    }
    expect(await h.deps.db.select().from(taskFeedback).where(eq(taskFeedback.taskId, id))).toEqual([]);
    for (const payload of [
      { rating: 0 },
      { rating: 5 },
      { correct: 'yes' },
      { correct: 'partial' },
      { correct: 'no' },
      { reuse: 'yes' },
      { reuse: 'no' },
      { note: 'x'.repeat(4000) },
    ]) {
      const res = await post(auth, id, payload);
      expect(res.statusCode, `${JSON.stringify(payload).slice(0, 40)}: ${res.body.slice(0, 200)}`).toBe(200);
    }
    // {} on existing feedback answers it as it stands and adds no history
    const rows = (await h.deps.db.select().from(taskFeedback).where(eq(taskFeedback.taskId, id))).length;
    const unchanged = await post(auth, id, {});
    expect(unchanged.json()).toMatchObject({ rating: 5, correct: 'no', reuse: 'no', history_count: rows });
    expect(await h.deps.db.select().from(taskFeedback).where(eq(taskFeedback.taskId, id))).toHaveLength(rows);
    // a path id that is not a uuid
    expect((await post(auth, 'not-a-uuid', { rating: 3 })).json().error).toBe('bad_request');
  });
});

describe('POST /v1/tasks/{id}/feedback: whose task, and when', () => {
  it('answers 404 for another account’s task and for an unknown one, and writes nothing', async () => {
    const owner = await newAccount(h, { scm: false });
    const other = await newAccount(h, { scm: false });
    const id = await doneTask(owner.account.id);
    for (const target of [id, '01900000-0000-7000-8000-000000000000']) {
      const res = await post(other.auth, target, { rating: 1, note: 'not mine' });
      expect(res.statusCode).toBe(404);
      expect(res.json().error).toBe('not_found');
    }
    expect(await h.deps.db.select().from(taskFeedback).where(eq(taskFeedback.taskId, id))).toEqual([]);
    await post(owner.auth, id, { rating: 4 });
    const peek = await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}/feedback`, headers: other.auth });
    expect(peek.statusCode).toBe(404);
  });

  it('answers 409 conflict while the task has not finished; done, failed and cancelled tasks take feedback', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    for (const status of ['pending', 'running', 'awaiting_plan', 'awaiting_diff'] as const) {
      const id = await doneTask(account.id, { status, finishedAt: null });
      const res = await post(auth, id, { rating: 2 });
      expect(res.statusCode, status).toBe(409);
      expect(res.json().error).toBe('conflict');
      expect(res.json().message).toContain(status);
    }
    for (const status of ['done', 'failed', 'cancelled'] as const) {
      const id = await doneTask(account.id, { status });
      expect((await post(auth, id, { rating: 2 })).statusCode, status).toBe(200);
    }
  });
});

describe('feedback updates', () => {
  it(
    'a second post updates the feedback (fields left out keep their value), keeps every post as history, and GET ' +
      'shows it',
    async () => {
      const { auth, account } = await newAccount(h, { scm: false });
      const id = await doneTask(account.id);
      const first = await post(auth, id, { rating: 4 });
      expect(first.json()).toMatchObject({
        task_id: id,
        rating: 4,
        correct: null,
        reuse: null,
        note: null,
        history_count: 1,
      });
      expect(first.json().updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
      h.clock.advance(1000);
      const second = await post(auth, id, { correct: 'partial', note: 'The fix missed the second call site.' });
      expect(second.json()).toMatchObject({
        rating: 4,
        correct: 'partial',
        reuse: null,
        note: 'The fix missed the second call site.',
        history_count: 2,
      });
      // the same post again is harmless: same current feedback, one more history row
      const again = await post(auth, id, { correct: 'partial', note: 'The fix missed the second call site.' });
      expect({ ...again.json(), history_count: 0, updated_at: '' }).toEqual({
        ...second.json(),
        history_count: 0,
        updated_at: '',
      });
      expect(again.json().history_count).toBe(3);
      // an empty note clears the note; a new rating replaces the old
      const cleared = await post(auth, id, { note: '  ', rating: 0 });
      expect(cleared.json()).toMatchObject({ rating: 0, correct: 'partial', note: null, history_count: 4 });

      const got = await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}/feedback`, headers: auth });
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual(cleared.json());
      const rows = await h.deps.db.select().from(taskFeedback).where(eq(taskFeedback.taskId, id));
      expect(rows.map((r) => r.rating).sort()).toEqual([0, 4, 4, 4]);
      expect(rows.every((r) => r.workspaceId === account.id)).toBe(true);
    },
  );

  it('posts at the same moment both land: neither field is lost', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    const id = await doneTask(account.id);
    const [a, b] = await Promise.all([post(auth, id, { rating: 5 }), post(auth, id, { reuse: 'no' })]);
    expect([a.statusCode, b.statusCode]).toEqual([200, 200]);
    const got = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}/feedback`, headers: auth })).json();
    expect(got).toMatchObject({ rating: 5, reuse: 'no', history_count: 2 });
  });

  it('GET answers 404 when the task has no feedback yet', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    const id = await doneTask(account.id);
    const res = await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}/feedback`, headers: auth });
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toBe('not_found');
  });
});

describe('demo tokens', () => {
  it('may give feedback on their own tasks only, and get 403 on memory and training data', async () => {
    const demo = (
      await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'demo-feedback@example.com' } })
    ).json().token as string;
    const demoAuth = { authorization: `Bearer ${demo}` };
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: demoAuth })).json();
    const own = await doneTask(me.id, { mode: 'preview' });
    const res = await post(demoAuth, own, { correct: 'no', note: 'It looked at the wrong file.' });
    expect(res.statusCode, res.body).toBe(200);
    const stranger = await newAccount(h, { scm: false });
    expect((await post(demoAuth, await doneTask(stranger.account.id), { rating: 1 })).statusCode).toBe(404);
    for (const [method, url] of [
      ['GET', '/v1/me/memory?repo=https://github.com/acme/widgets'],
      ['DELETE', '/v1/me/memory/01900000-0000-7000-8000-000000000000'],
      ['GET', '/v1/me/training/summary'],
      ['GET', '/v1/me/training/export.jsonl'],
    ] as const) {
      const r = await h.app.inject({ method, url, headers: demoAuth });
      expect(r.statusCode, url).toBe(403);
      expect(r.json().error).toBe('forbidden');
    }
  });
});
