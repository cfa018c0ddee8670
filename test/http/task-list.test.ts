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
import { newId } from '../../src/ids.js';
import { saveSiteFiles } from '../../src/sites/store.js';
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
      .values({ id: newId(), taskId: id, accountId: account.id, rating: 5, createdAt: now });
    await h.deps.db.insert(repoMemory).values({
      id: newId(),
      accountId: account.id,
      repo: 'x',
      kind: 'example',
      content: {},
      taskId: id,
      createdAt: now,
    });
    await h.deps.db
      .insert(creditLedger)
      .values({ id: newId(), accountId: account.id, taskId: id, kind: 'capture', amount: 1, createdAt: now });

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
    const rows = await h.deps.db.select({ id: tasks.id }).from(tasks).where(eq(tasks.accountId, account.id));
    expect(rows).toHaveLength(5);
  });
});
