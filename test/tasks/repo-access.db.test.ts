import { randomBytes } from 'node:crypto';
import { type Server, type Socket, createConnection, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { freePort } from '../support/ports.js';

/**
 * Who may start a fix task on which repository: the code-host checks of POST /v1/tasks
 * (src/tasks/repo-access.ts), asked of the fake GitHub over HTTP with the caller's token when
 * connected and anonymously otherwise.
 */

type CallerKind = 'demo' | 'free' | 'free+scm' | 'pro' | 'pro+scm';
/** private-readable: private with the caller's code-host user as a collaborator (when it has one). */
type RepoKind = 'public' | 'private-readable' | 'private-unreadable' | 'missing';

interface Row {
  caller: CallerKind;
  repo: RepoKind;
  status: number;
  error?: string;
  /** Parts the error message must contain. */
  says?: (string | RegExp)[];
}

const STARTED = 201;
const CONNECT_HINT = 'POST /v1/me/scm';

const MATRIX: Row[] = [
  { caller: 'demo', repo: 'public', status: STARTED },
  {
    caller: 'demo',
    repo: 'private-readable',
    status: 402,
    error: 'DEMO_PUBLIC_REPOS_ONLY',
    says: ['public repositories only'],
  },
  // read anonymously, a missing repository looks like a private one
  {
    caller: 'demo',
    repo: 'missing',
    status: 402,
    error: 'DEMO_PUBLIC_REPOS_ONLY',
    says: ['private or does not exist'],
  },

  { caller: 'free', repo: 'public', status: STARTED },
  {
    caller: 'free',
    repo: 'private-readable',
    status: 400,
    error: 'bad_request',
    says: ['repo_url', 'does not exist', 'private', CONNECT_HINT],
  },
  {
    caller: 'free',
    repo: 'missing',
    status: 400,
    error: 'bad_request',
    says: ['repo_url', 'does not exist', CONNECT_HINT],
  },

  { caller: 'free+scm', repo: 'public', status: STARTED },
  {
    caller: 'free+scm',
    repo: 'private-readable',
    status: 402,
    error: 'PRIVATE_REPO_REQUIRES_UPGRADE',
    says: ['upgrade'],
  },
  {
    caller: 'free+scm',
    repo: 'private-unreadable',
    status: 400,
    error: 'bad_request',
    says: ['repo_url', 'cannot read'],
  },
  { caller: 'free+scm', repo: 'missing', status: 400, error: 'bad_request', says: ['repo_url', 'does not exist'] },

  // a pull-request run pushes as the caller: no connection, no run (asked before the host is)
  { caller: 'pro', repo: 'public', status: 412, error: 'scm_not_connected', says: [CONNECT_HINT] },
  { caller: 'pro', repo: 'private-readable', status: 412, error: 'scm_not_connected' },
  { caller: 'pro', repo: 'missing', status: 412, error: 'scm_not_connected' },

  { caller: 'pro+scm', repo: 'public', status: STARTED },
  { caller: 'pro+scm', repo: 'private-readable', status: STARTED },
  {
    caller: 'pro+scm',
    repo: 'private-unreadable',
    status: 400,
    error: 'bad_request',
    says: ['repo_url', 'does not exist', 'cannot read'],
  },
  { caller: 'pro+scm', repo: 'missing', status: 400, error: 'bad_request', says: ['repo_url', 'does not exist'] },
];

interface Caller {
  auth: Record<string, string>;
  login?: string;
  plan: 'demo' | 'free' | 'pro';
}

let demoSeq = 0;

async function makeCaller(h: Harness, kind: CallerKind): Promise<Caller> {
  if (kind === 'demo') {
    // each from an address of its own: three demo tokens per address a day
    const res = await h.app.inject({
      method: 'POST',
      url: '/v1/demo/token',
      payload: { email: `demo${++demoSeq}@example.com` },
      remoteAddress: `10.77.${demoSeq}.1`,
    });
    expect(res.statusCode, res.body).toBe(201);
    return { auth: { authorization: `Bearer ${res.json().token}` }, plan: 'demo' };
  }
  const plan = kind.startsWith('pro') ? 'pro' : 'free';
  const { auth, scm } = await newAccount(h, { plan, credits: 5, scm: kind.endsWith('+scm') });
  return { auth, login: scm?.login, plan };
}

/** A repository of the given kind on the fake host, as its web URL; `missing` is never created. */
function makeRepo(h: Harness, kind: RepoKind, caller: Caller): { url: string; name: string } {
  const name = `r-${kind}-${randomBytes(3).toString('hex')}`;
  if (kind !== 'missing') {
    const collaborators = kind === 'private-readable' && caller.login ? [caller.login] : [];
    h.github.createRepo('acme', name, { private: kind !== 'public', collaborators, files: { 'README.md': 'hello\n' } });
  }
  return { url: `${h.github.webUrl}/acme/${name}`, name };
}

const postTask = (h: Harness, auth: Record<string, string>, repoUrl: string) =>
  h.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: auth,
    payload: { prompt: 'Fix the crash on empty input', repo_url: repoUrl },
  });

const listTasks = async (h: Harness, auth: Record<string, string>) => {
  const res = await h.app.inject({ method: 'GET', url: '/v1/tasks', headers: auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as unknown[];
};

const creditsOf = async (h: Harness, auth: Record<string, string>) =>
  (await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json().credits as number;

/** What a refused POST must leave behind: no task, no credit held. */
async function expectNothingHeld(h: Harness, caller: Caller, creditsBefore: number, label: string) {
  expect(await listTasks(h, caller.auth), `${label}: a refused POST created a task`).toEqual([]);
  expect(await creditsOf(h, caller.auth), `${label}: a refused POST moved credits`).toBe(creditsBefore);
}

describe('repository access at POST /v1/tasks', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({}, { scm: 'fake' });
  });
  afterAll(() => h.close());

  it.each(
    MATRIX.map(
      (row) => [`${row.caller} + ${row.repo} → ${row.status}${row.error ? ` ${row.error}` : ''}`, row] as const,
    ),
  )('%s', async (label, row) => {
    const caller = await makeCaller(h, row.caller);
    const repo = makeRepo(h, row.repo, caller);
    const creditsBefore = await creditsOf(h, caller.auth);
    const seen = h.github.requests.length;

    const res = await postTask(h, caller.auth, repo.url);
    expect(res.statusCode, `${label}: ${res.body}`).toBe(row.status);

    const reads = h.github.requests
      .slice(seen)
      .filter((r) => r.kind === 'rest' && r.path === `/api/v3/repos/acme/${repo.name}`);
    if (row.caller === 'pro') {
      expect(reads, `${label}: 412 comes before asking the host`).toEqual([]);
    } else {
      expect(reads.length, `${label}: the host was asked about the repository`).toBeGreaterThanOrEqual(1);
      // with the caller's token when connected; anonymously otherwise (demo tokens never use one)
      expect(
        reads.every((r) => r.authenticated === row.caller.endsWith('+scm')),
        `${label}: read ${row.caller.endsWith('+scm') ? 'with' : 'without'} the caller's token`,
      ).toBe(true);
    }

    if (row.status === STARTED) {
      const task = res.json();
      const mode = caller.plan === 'pro' ? 'pr' : 'preview';
      expect(task, label).toMatchObject({
        status: 'pending',
        mode,
        repo_owner: 'acme',
        repo_name: repo.name,
        repo_url: repo.url,
      });
      expect(await listTasks(h, caller.auth), label).toHaveLength(1);
      expect(await creditsOf(h, caller.auth), `${label}: credits`).toBe(
        mode === 'pr' ? creditsBefore - 1 : creditsBefore,
      );
      return;
    }
    const body = res.json();
    expect(body.error, `${label}: ${res.body}`).toBe(row.error);
    expect(body.request_id, label).toBeTruthy();
    for (const part of row.says ?? []) {
      if (typeof part === 'string') expect(body.message, `${label}: message`).toContain(part);
      else expect(body.message, `${label}: message`).toMatch(part);
    }
    await expectNothingHeld(h, caller, creditsBefore, label);
  });

  it('answers the same for a private repository nobody shared and one that does not exist (no existence oracle)', async () => {
    for (const kind of ['free', 'free+scm', 'pro+scm'] as const) {
      const caller = await makeCaller(h, kind);
      const hidden = makeRepo(h, 'private-unreadable', caller);
      const missing = makeRepo(h, 'missing', caller);
      const a = await postTask(h, caller.auth, hidden.url);
      const b = await postTask(h, caller.auth, missing.url);
      expect([a.statusCode, a.json().error], kind).toEqual([b.statusCode, b.json().error]);
      expect(a.json().message.replace(hidden.name, 'X'), kind).toBe(b.json().message.replace(missing.name, 'X'));
    }
  });

  it('follows a disconnect: a pro account that disconnects gets 412, a free one falls back to anonymous reads', async () => {
    const pro = await makeCaller(h, 'pro+scm');
    const free = await makeCaller(h, 'free+scm');
    const proRepo = makeRepo(h, 'private-readable', pro);
    const freeRepo = makeRepo(h, 'public', free);
    for (const c of [pro, free])
      expect((await h.app.inject({ method: 'DELETE', url: '/v1/me/scm', headers: c.auth })).json().disconnected).toBe(
        true,
      );
    const p = await postTask(h, pro.auth, proRepo.url);
    expect([p.statusCode, p.json().error]).toEqual([412, 'scm_not_connected']);
    const f = await postTask(h, free.auth, freeRepo.url);
    expect(f.statusCode, f.body).toBe(201);
  });

  it('answers 502 scm_unavailable when the host answers with an error of its own, holding nothing', async () => {
    for (const [kind, reply] of [
      ['pro+scm', { status: 503 }],
      ['free', { status: 500 }],
      [
        'demo',
        {
          status: 403,
          body: {
            message: 'API rate limit exceeded for 127.0.0.1.',
            documentation_url: 'https://docs.github.com/rest',
          },
          headers: { 'x-ratelimit-remaining': '0' },
        },
      ],
    ] as const) {
      const caller = await makeCaller(h, kind);
      const repo = makeRepo(h, 'public', caller);
      const creditsBefore = await creditsOf(h, caller.auth);
      h.github.failNext('GET', new RegExp(`^/repos/acme/${repo.name}$`), reply);
      const res = await postTask(h, caller.auth, repo.url);
      const label = `${kind} with the host answering ${reply.status}`;
      expect(res.statusCode, `${label}: ${res.body}`).toBe(502);
      expect(res.json().error, label).toBe('scm_unavailable');
      expect(res.json().message, label).toContain(String(reply.status));
      await expectNothingHeld(h, caller, creditsBefore, label);
    }
  });
});

/**
 * A TCP relay in front of the fake host's API that the test can cut, so an account connects
 * while the host is up and then finds it gone. `target` is set once the fake is listening.
 */
async function relay(): Promise<{ port: number; target: number; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { target: 0 };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ port: state.target, host: '127.0.0.1' });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  let open = true;
  return {
    port,
    get target() {
      return state.target;
    },
    set target(p: number) {
      state.target = p;
    },
    cut: async () => {
      if (!open) return;
      open = false;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

describe('repository access when the code host is down', () => {
  let down: Harness;
  let api: Awaited<ReturnType<typeof relay>>;
  beforeAll(async () => {
    // The service asks the API through the relay; git and the web host stay on the fake.
    api = await relay();
    down = await startHarness({ EMEND_SCM_API_URL: `http://127.0.0.1:${api.port}/api/v3` }, { scm: 'fake' });
    api.target = Number(new URL(down.github.apiUrl).port);
  });
  afterAll(async () => {
    await api?.cut();
    await down?.close();
  });

  it('answers 502 scm_unavailable (never 500) for every caller that needs the host, and holds nothing', async () => {
    const callers = {
      demo: await makeCaller(down, 'demo'),
      free: await makeCaller(down, 'free'),
      'pro+scm': await makeCaller(down, 'pro+scm'), // connected while the host was up
      pro: await makeCaller(down, 'pro'),
    };
    const repo = makeRepo(down, 'public', callers['pro+scm']);
    await api.cut();

    for (const [kind, caller] of Object.entries(callers)) {
      const creditsBefore = await creditsOf(down, caller.auth);
      const res = await postTask(down, caller.auth, repo.url);
      if (kind === 'pro') {
        // not connected: refused before the host is asked
        expect([res.statusCode, res.json().error], `${kind}: ${res.body}`).toEqual([412, 'scm_not_connected']);
      } else {
        expect(res.statusCode, `${kind}: ${res.body}`).toBe(502);
        expect(res.json().error, kind).toBe('scm_unavailable');
      }
      await expectNothingHeld(down, caller, creditsBefore, `${kind}, host down`);
    }
    expect(down.logLines.filter((l) => l.includes('unhandled error'))).toEqual([]);
  });
});
