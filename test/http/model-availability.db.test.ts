import { count, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// Issue 45, point 2: a task no model can run is refused when it is asked for (412
// model_not_configured), not failed by its planner a moment later, and nothing is created or
// counted; GET /v1/me says whether the server has a key of its own.

const json = (auth: Record<string, string>) => ({ ...auth, 'content-type': 'application/json' });

async function tasksOf(h: Harness, workspaceId: string) {
  const [row] = await h.deps.db.select({ n: count() }).from(tasks).where(eq(tasks.workspaceId, workspaceId));
  return row!.n;
}

describe('a server with no managed model key', () => {
  let h: Harness;
  beforeAll(async () => {
    // Blank: no managed key at all (the harness gives one otherwise).
    h = await startHarness({ OPENAI_API_KEY: '' });
    h.github.createRepo('a', 'b');
  });
  afterAll(() => h.close());

  it('refuses fix and scaffold tasks 412 model_not_configured, pointing at Account → Provider keys, and counts nothing', async () => {
    const { auth, workspace } = await newAccount(h, { plan: 'pro', credits: 3 });
    for (const payload of [
      { prompt: 'fix the bug in add', repo_url: 'https://github.com/a/b' },
      { prompt: 'fix the bug in add', repo_url: 'https://github.com/a/b', fixer: 'agent' },
      { prompt: 'a one-page site for a bakery', task_type: 'scaffold' },
    ]) {
      const res = await h.app.inject({ method: 'POST', url: '/v1/tasks', headers: json(auth), payload });
      expect(res.statusCode, res.body).toBe(412);
      expect(res.json()).toEqual({
        error: 'model_not_configured',
        message: expect.stringContaining('Account → Provider keys'),
        request_id: expect.any(String),
      });
      expect(res.json().message).toContain('OPENAI_API_KEY');
    }
    expect(await tasksOf(h, workspace.id)).toBe(0);
    const limits = (await h.app.inject({ method: 'GET', url: '/v1/tasks/limits', headers: auth })).json();
    expect(limits.used_this_month).toBe(0);
    // No credit was held either.
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json().credits).toBe(3);
  });

  it('refuses a demo token’s task the same way (demo tasks run on the server’s key)', async () => {
    const issued = await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'd@example.com' } });
    expect(issued.statusCode).toBe(201);
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: json({ authorization: `Bearer ${issued.json().token}` }),
      payload: { prompt: 'fix the bug in add', repo_url: 'https://github.com/a/b' },
    });
    expect([res.statusCode, res.json().error]).toEqual([412, 'model_not_configured']);
  });

  it('accepts the task of a workspace that uses its own saved key (BYOK)', async () => {
    const { auth, workspace } = await newAccount(h, { plan: 'free' });
    const saved = await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: json(auth),
      payload: { provider: 'anthropic', api_key: 'sk-ant-api03-own-key-0123456789' },
    });
    expect(saved.statusCode, saved.body).toBeLessThan(300);
    // A saved key is not enough while BYOK is off: the task would run on the (missing) server key.
    const off = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: json(auth),
      payload: { prompt: 'fix the bug in add', repo_url: 'https://github.com/a/b' },
    });
    expect([off.statusCode, off.json().error]).toEqual([412, 'model_not_configured']);
    await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: json(auth), payload: { enabled: true } });
    const on = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: json(auth),
      payload: { prompt: 'fix the bug in add', repo_url: 'https://github.com/a/b' },
    });
    expect(on.statusCode, on.body).toBe(201);
    expect(await tasksOf(h, workspace.id)).toBe(1);
  });

  it('says in GET /v1/me that the server has no key, and where its links point', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json();
    expect(me.server).toEqual({
      managed_providers: [],
      base_url: 'http://localhost:3000',
      base_url_local: true,
      demo_tokens: true,
    });
  });
});

describe('a server with a managed model key', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      ANTHROPIC_API_KEY: 'sk-ant-operator-0123456789',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:1/v1',
      EMEND_BASE_URL: 'https://emend.example.com',
    });
    h.github.createRepo('a', 'b');
  });
  afterAll(() => h.close());

  it('creates tasks on it, and refuses a BYOK workspace with no saved key, naming BYOK', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 2 });
    const payload = { prompt: 'fix the bug in add', repo_url: 'https://github.com/a/b' };
    const made = await h.app.inject({ method: 'POST', url: '/v1/tasks', headers: json(auth), payload });
    expect(made.statusCode, made.body).toBe(201);
    await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: json(auth), payload: { enabled: true } });
    const byok = await h.app.inject({ method: 'POST', url: '/v1/tasks', headers: json(auth), payload });
    expect([byok.statusCode, byok.json().error]).toEqual([412, 'model_not_configured']);
    expect(byok.json().message).toMatch(/BYOK.*Account → Provider keys/);
  });

  it('says in GET /v1/me which providers the server has a key for, and that its base URL is public', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', scm: false });
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json();
    expect(me.server).toEqual({
      managed_providers: ['anthropic'],
      base_url: 'https://emend.example.com',
      base_url_local: false,
      demo_tokens: true,
    });
  });
});
