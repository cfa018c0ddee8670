import { type Server, type Socket, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CodeHost, type CodeHostOptions, SCM_REQUEST_TIMEOUT_MS, ScmError } from '../../src/scm/code-host.js';
import { gitea } from '../../src/scm/gitea/gitea.js';
import { gitHub } from '../../src/scm/github/github.js';
import { gitLab } from '../../src/scm/gitlab/gitlab.js';

/**
 * A code host that cannot be reached, and one that takes the connection and never answers: each
 * adapter gives up with ScmError(null) (the latter after its time limit: 20 s by default, like
 * every adapter's; 300 ms here), asks once, and never puts the token in the message, so a task
 * never hangs on a code host. One suite, run once per adapter (GitLab's were two tests of their own;
 * test/scm/gitea.test.ts keeps its copy, whose errors its token check counts).
 */

interface AdapterCase {
  name: string;
  adapter(options: CodeHostOptions): CodeHost;
  apiPath: string;
  token: string;
  /** A pull request read and the words the adapter says it with. */
  pull: { owner: string; name: string; number: number; what: string };
}

const ADAPTERS: AdapterCase[] = [
  {
    name: 'GitHub',
    adapter: gitHub,
    apiPath: '/api/v3',
    token: 'ghp_secretsecretsecretsecretsecretsecre',
    pull: { owner: 'acme', name: 'widget', number: 1, what: 'reading pull request acme/widget#1' },
  },
  {
    name: 'GitLab',
    adapter: gitLab,
    apiPath: '/api/v4',
    token: 'glpat-secretsecretsecret',
    pull: { owner: 'acme/tools/widget', name: 'x', number: 1, what: 'reading merge request acme/tools/widget/x!1' },
  },
  {
    name: 'Gitea',
    adapter: gitea,
    apiPath: '/api/v1',
    token: '0123456789abcdef0123456789abcdef01234567',
    pull: { owner: 'acme', name: 'widget', number: 1, what: 'reading pull request acme/widget#1' },
  },
];

const failure = (p: Promise<unknown>): Promise<ScmError> =>
  p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e as ScmError,
  );

it('gives every adapter 20 s by default', () => {
  expect(SCM_REQUEST_TIMEOUT_MS).toBe(20_000);
});

describe.each(ADAPTERS)('$name adapter: a host it cannot reach, and one that never answers', (c) => {
  let silent: Server;
  let silentPort: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    silentPort = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('turns an unreachable host into ScmError(null), never with the token', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const host = c.adapter({ apiUrl: `http://127.0.0.1:${port}${c.apiPath}`, fetch, token: c.token });
    const user = await failure(host.user());
    expect(user).toBeInstanceOf(ScmError);
    expect(user.status).toBeNull();
    expect(user.message).toBe('checking the token: the code host could not be reached');
    const repo = await failure(host.repo('acme', 'widget'));
    expect(repo).toBeInstanceOf(ScmError);
    expect(repo.status).toBeNull();
    expect(repo.message).toBe('reading acme/widget: the code host could not be reached');
    for (const err of [user, repo]) expect(err.message).not.toContain(c.token);
  });

  it('times out with ScmError(null) after its time limit, without retrying, never with the token', async () => {
    const limit = 300;
    const host = c.adapter({
      apiUrl: `http://127.0.0.1:${silentPort}${c.apiPath}`,
      fetch,
      token: c.token,
      timeoutMs: limit,
    });
    const reads = [
      { call: () => host.pull(c.pull.owner, c.pull.name, c.pull.number), what: c.pull.what },
      { call: () => host.repo('acme', 'widget'), what: 'reading acme/widget' },
    ];
    for (const [i, read] of reads.entries()) {
      const started = Date.now();
      const err = await failure(read.call());
      const waited = Date.now() - started;
      expect(err).toBeInstanceOf(ScmError);
      expect(err.status).toBeNull();
      expect(err.message).toBe(`${read.what}: the code host did not answer in time`);
      expect(err.message).not.toContain(c.token);
      expect(waited).toBeGreaterThanOrEqual(limit - 50);
      expect(waited).toBeLessThan(limit + 5_000);
      // the pull request read is one request: asked once, not retried
      if (i === 0) expect(sockets.length).toBe(1);
    }
  });
});
