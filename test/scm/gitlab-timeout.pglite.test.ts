import { type Server, type Socket, createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScmError } from '../../src/scm/code-host.js';
import { gitLab } from '../../src/scm/gitlab/gitlab.js';
import { SCM_REQUEST_TIMEOUT_MS } from '../../src/scm/code-host.js';

/**
 * A GitLab that accepts the connection and never answers: the adapter gives up after its time
 * limit (20 s by default, like every adapter's; 300 ms here) with ScmError(null), so a task never
 * hangs on a code host.
 */
describe('GitLab adapter: a host that never answers', () => {
  let server: Server;
  let port: number;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.push(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('times out with ScmError(null) after its time limit, never with the token', async () => {
    expect(SCM_REQUEST_TIMEOUT_MS).toBe(20_000);
    const limit = 300;
    const token = 'glpat-secretsecretsecret';
    const gh = gitLab({ apiUrl: `http://127.0.0.1:${port}/api/v4`, fetch, token, timeoutMs: limit });
    const started = Date.now();
    const err = (await gh.pull('acme/tools/widget', 'x', 1).catch((e: unknown) => e)) as ScmError;
    const waited = Date.now() - started;
    expect(err).toBeInstanceOf(ScmError);
    expect(err.status).toBeNull();
    expect(err.message).toBe('reading merge request acme/tools/widget/x!1: the code host did not answer in time');
    expect(err.message).not.toContain(token);
    expect(waited).toBeGreaterThanOrEqual(limit - 50);
    expect(waited).toBeLessThan(limit + 5_000);
    expect(sockets.length).toBe(1);
  });
});
