import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  creditLedger,
  repoMemory,
  siteFiles,
  siteScreenshots,
  taskFeedback,
  taskLogs,
  tasks,
} from '../../src/db/schema.js';
import { AppError } from '../../src/errors.js';
import { newId } from '../../src/ids.js';
import { saveSiteFiles } from '../../src/sites/store.js';
import { encodeCursor, listTaskPage } from '../../src/tasks/task-list.js';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const get = (auth: Record<string, string>, url: string) => h.app.inject({ method: 'GET', url, headers: auth });
const ids = (res: { json: () => { id: string }[] }) => res.json().map((t) => t.id);
/** The next page's path from a Link header, or null on the last page. */
function nextOf(link: string | string[] | number | undefined): string | null {
  if (link === undefined) return null;
  const m = /^<([^>]+)>; rel="next"$/.exec(String(link));
  if (!m) throw new Error(`not a next link: ${link}`);
  return m[1]!;
}

describe('GET /v1/tasks pages and filters', () => {
  it('walks every task once, newest first, through the Link header; the default is still the last 100', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    // 30 tasks share one created_at: the id breaks the tie, so no page boundary loses or repeats one.
    const rows = Array.from({ length: 230 }, (_, i) =>
      taskRow(account.id, i, i < 30 ? { createdAt: new Date(Date.UTC(2026, 0, 1)) } : {}),
    );
    await insertTasks(h.deps.db, rows);
    const order = [...rows]
      .sort((a, b) => b.createdAt!.getTime() - a.createdAt!.getTime() || (b.id! < a.id! ? -1 : 1))
      .map((r) => r.id);

    const first = await get(auth, '/v1/tasks');
    expect(first.statusCode).toBe(200);
    expect(ids(first)).toEqual(order.slice(0, 100));
    expect(nextOf(first.headers.link)).toMatch(/^\/v1\/tasks\?limit=100&cursor=/);

    const seen: string[] = [];
    let url: string | null = '/v1/tasks?limit=7';
    let pages = 0;
    while (url) {
      const res = await get(auth, url);
      expect(res.statusCode).toBe(200);
      expect(res.json().length).toBeLessThanOrEqual(7);
      seen.push(...ids(res));
      url = nextOf(res.headers.link);
      pages++;
    }
    expect(seen).toEqual(order);
    expect(pages).toBe(Math.ceil(230 / 7));
  });

  it('filters by status, task_type, repo_url (any spelling of it), parent_id and creation time, combined with AND', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    const other = await newAccount(h, { scm: false });
    const parent = taskRow(account.id, 1);
    const rows = [
      parent,
      taskRow(account.id, 2, { status: 'failed', parentId: parent.id }),
      taskRow(account.id, 3, { status: 'cancelled', repoOwner: 'acme', repoName: 'gadgets' }),
      taskRow(account.id, 4, { taskType: 'scaffold', mode: 'preview', repoUrl: null, repoOwner: null, repoName: null }),
      taskRow(other.account.id, 5, { status: 'failed', parentId: parent.id }),
    ];
    await insertTasks(h.deps.db, rows);
    const list = async (q: string) => {
      const res = await get(auth, `/v1/tasks?${q}`);
      expect(res.statusCode, res.body).toBe(200);
      return ids(res).sort();
    };
    const sorted = (...r: typeof rows) => r.map((x) => x.id).sort();
    expect(await list('status=failed')).toEqual(sorted(rows[1]!));
    expect(await list('task_type=scaffold')).toEqual(sorted(rows[3]!));
    expect(await list(`repo_url=${encodeURIComponent('https://github.com/ACME/Widgets.git')}`)).toEqual(
      sorted(rows[0]!, rows[1]!),
    );
    expect(await list(`parent_id=${parent.id}`)).toEqual(sorted(rows[1]!));
    // taskRow i is created at 2026-01-01T00:00:0i: after is inclusive, before exclusive.
    expect(await list('created_after=2026-01-01T00:00:02Z&created_before=2026-01-01T00:00:04Z')).toEqual(
      sorted(rows[1]!, rows[2]!),
    );
    expect(await list('status=failed&task_type=scaffold')).toEqual([]);
  });

  it('answers 400 naming the parameter for a bad value, and keeps working after', async () => {
    const { auth } = await newAccount(h, { scm: false });
    const bad: [string, RegExp][] = [
      ['limit=0', /limit/],
      ['limit=101', /limit/],
      ['limit=ten', /limit/],
      ['status=finished', /status/],
      ['task_type=bug', /task_type/],
      ['parent_id=42', /parent_id/],
      ['created_after=yesterday', /created_after/],
      ['created_before=2026-13-40T00:00:00Z', /created_before/],
      ['cursor=not-a-cursor', /cursor/],
      [`cursor=${Buffer.from('["2026-01-01T00:00:00.000Z","x"]').toString('base64url')}`, /cursor/],
      ['repo_url=https://example.org/a/b', /repo_url/],
    ];
    for (const [q, names] of bad) {
      const res = await get(auth, `/v1/tasks?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().message, q).toMatch(names);
    }
    expect((await get(auth, '/v1/tasks?limit=1')).statusCode).toBe(200);
  });
});

describe('GET /v1/tasks: no cursor or date it did not issue reaches the database', () => {
  // The dates of issue 26: each made PostgreSQL refuse the query ("date/time field value out of
  // range"), a 500. The last two are the ends of what a JavaScript Date holds.
  const OUT_OF_RANGE = [
    '0000-01-01T00:00:00.000Z',
    '+010000-01-01T00:00:00.000Z',
    '+275760-09-13T00:00:00.000Z',
    '-271821-04-20T00:00:00.000Z',
  ];
  const ID = '01900000-0000-7000-8000-000000000000';
  const refusedCursor = (res: { statusCode: number; json: () => { error: string; message: string } }) => {
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'bad_request', message: expect.stringMatching(/^cursor: not a cursor/) });
  };

  it('refuses a crafted cursor, signed or not, and one whose signature or position was altered', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    await insertTasks(h.deps.db, [taskRow(account.id, 1), taskRow(account.id, 2), taskRow(account.id, 3)]);
    const issued = new URL(nextOf((await get(auth, '/v1/tasks?limit=1')).headers.link)!, 'http://x').searchParams.get(
      'cursor',
    )!;
    expect((await get(auth, `/v1/tasks?limit=1&cursor=${issued}`)).statusCode).toBe(200);
    const [payload, mac] = issued.split('.') as [string, string];

    const crafted = OUT_OF_RANGE.flatMap((at) => {
      const unsigned = Buffer.from(JSON.stringify([at, ID])).toString('base64url');
      // as the service wrote cursors before they were signed, and with a signature that is not ours
      return [unsigned, `${unsigned}.${mac}`];
    });
    // the issued position moved to year 0000 under the issued signature
    const moved = Buffer.from(
      JSON.stringify(['0000-01-01T00:00:00.000Z', JSON.parse(Buffer.from(payload, 'base64url').toString())[1]]),
    ).toString('base64url');
    const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    for (const cursor of [
      ...crafted,
      `${moved}.${mac}`,
      `${payload}.${flipped}`,
      `${payload}.${mac.slice(0, -1)}`,
      `${payload}.${mac.slice(0, -1)}é`,
      `${payload}.${mac}.${mac}`,
      payload,
      `.${mac}`,
    ]) {
      const res = await get(auth, `/v1/tasks?cursor=${encodeURIComponent(cursor)}`);
      refusedCursor(res);
    }
  });

  it('refuses a cursor signed with its own key whose time is out of range or not as it writes one', async () => {
    const { auth } = await newAccount(h, { scm: false });
    // The service never signs these (its rows hold its own clock's times): this is the check that
    // stands behind the signature, should a row hold such a time or the key leak.
    for (const at of OUT_OF_RANGE) {
      const cursor = encodeCursor(h.deps, { createdAt: new Date(at), id: ID });
      refusedCursor(await get(auth, `/v1/tasks?cursor=${encodeURIComponent(cursor)}`));
    }
  });

  it('answers 400 naming created_after or created_before for a time outside years 0001 to 9999, in UTC', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    const row = taskRow(account.id, 1);
    await insertTasks(h.deps.db, [row]);
    for (const name of ['created_after', 'created_before']) {
      for (const at of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-05:00']) {
        const res = await get(auth, `/v1/tasks?${name}=${encodeURIComponent(at)}`);
        expect(res.statusCode, `${name}=${at}`).toBe(400);
        expect(res.json(), `${name}=${at}`).toMatchObject({
          error: 'bad_request',
          message: `querystring ${name}: out of range (years 0001 to 9999)`,
        });
      }
      // JavaScript's signed six-digit years are not RFC 3339 at all
      const res = await get(auth, `/v1/tasks?${name}=${encodeURIComponent('+275760-09-13T00:00:00.000Z')}`);
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(new RegExp(`^querystring ${name}: `));
    }
    // the ends of the range themselves are times the database holds
    const ends = await get(
      auth,
      `/v1/tasks?created_after=0001-01-01T00:00:00Z&created_before=${encodeURIComponent('9999-12-31T23:59:59.999Z')}`,
    );
    expect(ends.statusCode, ends.body).toBe(200);
    expect(ids(ends)).toEqual([row.id]);
  });

  it('checks the times itself, for a caller that is not the route', async () => {
    const { account } = await newAccount(h, { scm: false });
    for (const name of ['created_after', 'created_before'] as const) {
      const page = listTaskPage(h.deps, account.id, { [name]: '0000-01-01T00:00:00.000Z' });
      await expect(page).rejects.toThrow(AppError);
      await expect(page).rejects.toThrow(`${name}: out of range (years 0001 to 9999)`);
    }
  });
});

describe('DELETE /v1/tasks/{id}', () => {
  it('deletes a finished task and everything of it but the ledger; its site answers 404', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    const row = taskRow(account.id, 7, {
      taskType: 'scaffold',
      siteSlug: `site-${newId().slice(0, 8)}`,
      deployedUrl: 'http://localhost/s/x/',
    });
    const kept = taskRow(account.id, 8);
    await insertTasks(h.deps.db, [row, kept]);
    const id = row.id!;
    await saveSiteFiles(h.deps, id, [{ path: 'index.html', content: '<h1>hi</h1>' }]);
    expect((await h.app.inject({ method: 'GET', url: `/s/${row.siteSlug}/` })).statusCode).toBe(200);
    const now = new Date();
    await h.deps.db.insert(taskLogs).values({ taskId: id, step: 'planner', status: 'done', createdAt: now });
    await h.deps.db
      .insert(siteScreenshots)
      .values({ taskId: id, name: 'desktop.png', png: Buffer.from('png'), createdAt: now });
    await h.deps.db
      .insert(taskFeedback)
      .values({ id: newId(), taskId: id, workspaceId: account.id, rating: 5, createdAt: now });
    await h.deps.db.insert(repoMemory).values({
      id: newId(),
      workspaceId: account.id,
      repo: 'x',
      kind: 'example',
      content: {},
      taskId: id,
      createdAt: now,
    });
    await h.deps.db
      .insert(creditLedger)
      .values({ id: newId(), workspaceId: account.id, taskId: id, kind: 'capture', amount: 1, createdAt: now });

    const del = await h.app.inject({ method: 'DELETE', url: `/v1/tasks/${id}`, headers: auth });
    expect(del.statusCode, del.body).toBe(204);
    expect(del.body).toBe('');
    expect((await get(auth, `/v1/tasks/${id}`)).statusCode).toBe(404);
    expect(ids(await get(auth, '/v1/tasks'))).toEqual([kept.id]);
    const exported = await get(auth, '/v1/me/training/export.jsonl');
    expect(exported.statusCode).toBe(200);
    expect(exported.body).toContain(kept.id);
    expect(exported.body).not.toContain(id);
    expect((await h.app.inject({ method: 'GET', url: `/s/${row.siteSlug}/` })).statusCode).toBe(404);
    for (const table of [taskLogs, taskFeedback, siteFiles, siteScreenshots, repoMemory] as const)
      expect(await h.deps.db.select().from(table).where(eq(table.taskId, id))).toEqual([]);
    expect(await h.deps.db.select().from(creditLedger).where(eq(creditLedger.taskId, id))).toHaveLength(1);
    const again = await h.app.inject({ method: 'DELETE', url: `/v1/tasks/${id}`, headers: auth });
    expect(again.statusCode).toBe(404);
    expect(again.json().error).toBe('not_found');
  });

  it('refuses an unfinished task with 409 and a stranger’s with 404, deleting nothing', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    const stranger = await newAccount(h, { scm: false });
    const active = ['pending', 'running', 'awaiting_plan', 'awaiting_diff'].map((status, i) =>
      taskRow(account.id, 20 + i, { status }),
    );
    const done = taskRow(account.id, 30);
    await insertTasks(h.deps.db, [...active, done]);
    for (const t of active) {
      const res = await h.app.inject({ method: 'DELETE', url: `/v1/tasks/${t.id}`, headers: auth });
      expect(res.statusCode, t.status).toBe(409);
      expect(res.json()).toMatchObject({ error: 'conflict', message: expect.stringContaining(t.status!) });
    }
    const theirs = await h.app.inject({ method: 'DELETE', url: `/v1/tasks/${done.id}`, headers: stranger.auth });
    expect(theirs.statusCode).toBe(404);
    const rows = await h.deps.db.select({ id: tasks.id }).from(tasks).where(eq(tasks.workspaceId, account.id));
    expect(rows).toHaveLength(5);
  });
});
