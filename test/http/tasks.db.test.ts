import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerBalance } from '../../src/billing/credits.js';
import { workspaces, taskLogs, tasks } from '../../src/db/schema.js';
import { type Harness, forceStatus, newAccount, startHarness, useOwnKey } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

const REPO = 'https://github.com/psf/requests';

async function post(auth: Record<string, string>, body: unknown) {
  return h.app.inject({ method: 'POST', url: '/v1/tasks', headers: auth, payload: body as object });
}

/** Ends every active task of an account, as the engine would, so the concurrency cap frees. */
async function finishAll(accountId: string) {
  await forceStatus(h, eq(tasks.workspaceId, accountId), 'done');
}

describe('POST /v1/tasks', () => {
  it('creates a pending pr-mode task for a paid account, holding one credit', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 2 });
    const res = await post(auth, { prompt: 'Fix the crash in Session.send', repo_url: `${REPO}.git` });
    expect(res.statusCode).toBe(201);
    const task = res.json();
    expect(task).toMatchObject({
      status: 'pending',
      mode: 'pr',
      task_type: 'fix',
      repo_url: REPO,
      repo_owner: 'psf',
      repo_name: 'requests',
      base_branch: 'main',
      approval_mode: 'auto',
      pr_url: null,
      retry_count: 0,
      cost_usd: 0,
      tokens_total: 0,
      pr_merged: false,
      human_edit_after: false,
    });
    expect(task.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(task.created_at).toISOString()).toBe(task.created_at);
    const [row] = await h.deps.db.select().from(workspaces).where(eq(workspaces.id, account.id));
    expect(row!.credits).toBe(1);
    expect(await ledgerBalance(h.deps.db, account.id)).toBe(1);
  });

  it('gives free accounts preview mode without touching credits, and honours base_branch and approval_mode', async () => {
    const { auth } = await newAccount(h, { plan: 'free' });
    const res = await post(auth, {
      prompt: 'add a flag',
      repo_url: `${REPO}/`,
      base_branch: 'release/2.x',
      approval_mode: 'manual',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ mode: 'preview', base_branch: 'release/2.x', approval_mode: 'manual' });
  });

  it('creates scaffold tasks without a repository', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 1 });
    const res = await post(auth, { prompt: 'A landing page for a bakery', task_type: 'scaffold' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ task_type: 'scaffold', repo_url: null });
  });

  it.each([
    [{ repo_url: REPO }, 'prompt'],
    [{ prompt: 'ab', repo_url: REPO }, 'prompt'],
    [{ prompt: 'x'.repeat(2001), repo_url: REPO }, 'prompt'],
    [{ prompt: '   a   ', repo_url: REPO }, 'prompt'],
    [{ prompt: 123, repo_url: REPO }, 'prompt'],
    [{ prompt: 'fix it' }, 'repo_url'],
    [{ prompt: 'fix it', repo_url: REPO, task_type: 'refactor' }, 'task_type'],
    [{ prompt: 'fix it', repo_url: REPO, base_branch: '' }, 'base_branch'],
    [{ prompt: 'fix it', repo_url: REPO, base_branch: 'a..b' }, 'base_branch'],
    [{ prompt: 'fix it', repo_url: REPO, approval_mode: 'sometimes' }, 'approval_mode'],
    [{ prompt: 'fix it', repo_url: REPO, colour: 'blue' }, 'colour'],
    [{ prompt: 'site', task_type: 'scaffold', repo_url: REPO }, 'repo_url'],
  ])('answers 400 bad_request naming $1 (case %#)', async (body, field) => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const res = await post(auth, body);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'bad_request' });
    expect(res.json().message).toContain(field);
    expect(res.json().request_id).toBeTruthy();
  });

  // Not a URI at all (the published schema's `format: uri`): malformed input, like any other field.
  it.each(['git@github.com:psf/requests.git', 'not a url'])(
    'answers 400 bad_request naming repo_url for %s, which is not a URI',
    async (url) => {
      const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
      const res = await post(auth, { prompt: 'fix it', repo_url: url });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error: 'bad_request', message: expect.stringMatching(/^repo_url: .*uri/) });
    },
  );

  it.each([
    'https://gitlab.com/psf/requests',
    'http://github.com/psf/requests',
    'https://github.com/psf',
    'https://github.com/psf/requests/tree/main',
    'https://user:pw@github.com/psf/requests',
    'https://github.com/psf/requests?tab=readme',
  ])('answers 400 not_a_scm_url for %s', async (url) => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const res = await post(auth, { prompt: 'fix it', repo_url: url });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ error: 'not_a_scm_url' });
    expect(res.json().message).toContain('repo_url');
  });

  it('follows the configured code host (GitHub Enterprise Server)', async () => {
    const ghes = await startHarness({ EMEND_SCM_WEB_URL: 'https://git.example.com' });
    ghes.github.createRepo('team', 'app');
    try {
      const { auth } = await newAccount(ghes, { plan: 'pro', credits: 5 });
      const ok = await ghes.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: auth,
        payload: { prompt: 'fix it', repo_url: 'https://git.example.com/team/app' },
      });
      expect(ok.statusCode).toBe(201);
      const gh = await ghes.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: auth,
        payload: { prompt: 'fix it', repo_url: REPO },
      });
      expect(gh.json().error).toBe('not_a_scm_url');
    } finally {
      await ghes.close();
    }
  });

  it('answers 402 NO_CREDITS for a managed pr-mode run without credits, and BYOK needs none', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 0 });
    const res = await post(auth, { prompt: 'fix it', repo_url: REPO });
    expect(res.statusCode).toBe(402);
    expect(res.json().error).toBe('NO_CREDITS');
    await useOwnKey(h, auth);
    const byok = await post(auth, { prompt: 'fix it', repo_url: REPO });
    expect(byok.statusCode).toBe(201);
    expect(byok.json()).toMatchObject({ byok: true, mode: 'pr' });
  });

  it('answers 429 CONCURRENT_LIMIT at the plan cap of active tasks', async () => {
    const { account, auth } = await newAccount(h, { plan: 'pro', credits: 10 });
    for (let i = 0; i < 3; i++)
      expect((await post(auth, { prompt: `task ${i}`, repo_url: REPO })).statusCode).toBe(201);
    const fourth = await post(auth, { prompt: 'task 4', repo_url: REPO });
    expect(fourth.statusCode).toBe(429);
    expect(fourth.json().error).toBe('CONCURRENT_LIMIT');
    // awaiting states count as active too
    await forceStatus(h, eq(tasks.workspaceId, account.id), 'awaiting_plan');
    expect((await post(auth, { prompt: 'task 4', repo_url: REPO })).statusCode).toBe(429);
    await finishAll(account.id);
    expect((await post(auth, { prompt: 'task 4', repo_url: REPO })).statusCode).toBe(201);
  });

  it('answers 402 FREE_LIMIT_REACHED past the monthly quota; BYOK lifts it; a new month resets it', async () => {
    const { account, auth } = await newAccount(h, { plan: 'free' });
    for (let i = 0; i < 10; i++) {
      expect((await post(auth, { prompt: `task ${i}`, repo_url: REPO })).statusCode).toBe(201);
      await finishAll(account.id);
    }
    const over = await post(auth, { prompt: 'one more', repo_url: REPO });
    expect(over.statusCode).toBe(402);
    expect(over.json().error).toBe('FREE_LIMIT_REACHED');
    const limits = await h.app.inject({ method: 'GET', url: '/v1/tasks/limits', headers: auth });
    expect(limits.json()).toEqual({
      limits: {
        monthly: 10,
        concurrent: 1,
        maxFiles: 5,
        maxRetries: 1,
        mode: 'preview',
        fixers: ['pipeline'],
        agentTurns: 20,
        agentWallMs: 600_000,
        maxAttempts: 1,
      },
      used_this_month: 10,
      plan: 'free',
      use_byok: false,
      fixer: 'pipeline',
    });
    await useOwnKey(h, auth);
    expect((await post(auth, { prompt: 'with my key', repo_url: REPO })).statusCode).toBe(201);
    await finishAll(account.id);
    await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: false } });
    expect((await post(auth, { prompt: 'again', repo_url: REPO })).json().error).toBe('FREE_LIMIT_REACHED');
    const now = h.clock.now();
    h.clock.set(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 0, 0, 1)));
    expect((await post(auth, { prompt: 'next month', repo_url: REPO })).statusCode).toBe(201);
  });

  it('answers 429 rate_limited with Retry-After past 20 POSTs a minute, counting refused POSTs too', async () => {
    const { account, auth } = await newAccount(h, { plan: 'scale', credits: 100 });
    const start = h.clock.now().getTime();
    const codes: number[] = [];
    for (let i = 0; i < 20; i++) {
      // 5 accepted, then CONCURRENT_LIMIT and bad requests: all of them count
      const body = i % 2 ? { prompt: 'x' } : { prompt: `task ${i}`, repo_url: REPO };
      codes.push((await post(auth, body)).statusCode);
      h.clock.advance(1000);
    }
    expect(codes.filter((c) => c === 201)).toHaveLength(5);
    const limited = await post(auth, { prompt: 'one too many', repo_url: REPO });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toBe('rate_limited');
    // the first POST leaves the window 60 s after it was made; 20 s have passed
    expect(limited.headers['retry-after']).toBe(String(Math.ceil((start + 60_000 - h.clock.now().getTime()) / 1000)));
    // refused ones are not counted: still limited right after
    expect((await post(auth, { prompt: 'still', repo_url: REPO })).statusCode).toBe(429);
    h.clock.set(new Date(start + 60_001));
    await finishAll(account.id);
    expect((await post(auth, { prompt: 'a slot freed', repo_url: REPO })).statusCode).toBe(201);
    expect((await post(auth, { prompt: 'only one slot', repo_url: REPO })).statusCode).toBe(429);
  });
});

describe('GET /v1/tasks and /v1/tasks/{id}', () => {
  it('lists the last 100 of the caller’s tasks, newest first, with summaries', async () => {
    const { account, auth } = await newAccount(h, { plan: 'scale', credits: 1000 });
    const other = await newAccount(h, { plan: 'pro', credits: 5 });
    await post(other.auth, { prompt: 'not yours', repo_url: REPO });
    for (let i = 0; i < 103; i++) {
      if (i % 20 === 19) h.clock.advance(61_000);
      expect((await post(auth, { prompt: `task number ${i}`, repo_url: REPO })).statusCode).toBe(201);
      await finishAll(account.id);
      h.clock.advance(10);
    }
    const res = await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: auth });
    expect(res.statusCode).toBe(200);
    const list = res.json();
    expect(list).toHaveLength(100);
    expect(list[0].prompt).toBe('task number 102');
    expect(list[99].prompt).toBe('task number 3');
    expect(Object.keys(list[0])).toEqual(expect.arrayContaining(['id', 'prompt', 'status', 'pr_url']));
    expect(list.some((t: { prompt: string }) => t.prompt === 'not yours')).toBe(false);
  });

  it('returns the task with its logs, and 404 for another account’s task or an unknown id', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const other = await newAccount(h, { plan: 'pro', credits: 5 });
    const created = (await post(auth, { prompt: 'fix the bug', repo_url: REPO })).json();
    await h.deps.db.insert(taskLogs).values({
      taskId: created.id,
      step: 'planner',
      status: 'done',
      input: { prompt: 'fix the bug' },
      output: { summary: 'plan' },
      tokens: 120,
      costUsd: 0.0012,
      durationMs: 900,
      createdAt: h.clock.now(),
    });
    const res = await h.app.inject({ method: 'GET', url: `/v1/tasks/${created.id}`, headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.json().task).toEqual(created);
    expect(res.json().logs).toEqual([
      expect.objectContaining({
        step: 'planner',
        status: 'done',
        input: { prompt: 'fix the bug' },
        output: { summary: 'plan' },
        tokens: 120,
        cost_usd: 0.0012,
        duration_ms: 900,
      }),
    ]);
    const theirs = await h.app.inject({ method: 'GET', url: `/v1/tasks/${created.id}`, headers: other.auth });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error).toBe('not_found');
    const unknown = await h.app.inject({
      method: 'GET',
      url: '/v1/tasks/01900000-0000-7000-8000-000000000000',
      headers: auth,
    });
    expect(unknown.statusCode).toBe(404);
    const malformed = await h.app.inject({ method: 'GET', url: '/v1/tasks/not-a-uuid', headers: auth });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.json().message).toContain('id');
  });

  it('serves the same routes without the /v1 prefix', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const created = (
      await h.app.inject({
        method: 'POST',
        url: '/tasks',
        headers: auth,
        payload: { prompt: 'fix it', repo_url: REPO },
      })
    ).json();
    const res = await h.app.inject({ method: 'GET', url: `/tasks/${created.id}`, headers: auth });
    expect(res.json().task.id).toBe(created.id);
    expect((await h.app.inject({ method: 'GET', url: '/tasks/limits', headers: auth })).json().plan).toBe('pro');
  });
});
