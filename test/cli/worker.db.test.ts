import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { openTestDatabase, postgresUrlOf } from '../support/test-db.js';
import {
  type CliProcess,
  cliEnv,
  freePort,
  jsonLine,
  killAll,
  newDataDir,
  removeDataDirs,
  runCli,
  startCli,
  waitForHealth,
} from './cli-process.js';

// `emend serve` runs the API and a worker; `serve --no-worker` and `emend worker` split
// them. The managed model key's provider is a closed loopback port, so a task that a worker
// takes up fails at the planner's call: that failure is the sign a worker ran it. (With no key
// at all, POST /v1/tasks refuses the task up front: test/http/model-availability.db.test.ts.)
describe('emend worker and serve --no-worker', { timeout: 120_000 }, () => {
  let github: FakeGitHub;
  beforeAll(async () => {
    github = await startFakeGitHub();
    github.createRepo('a', 'b');
  });
  afterEach(killAll);
  afterAll(async () => {
    removeDataDirs();
    await github.close();
  });

  async function environment() {
    const base = {
      EMEND_DATA_DIR: newDataDir(),
      LOG_LEVEL: 'warn',
      EMEND_SCM_API_URL: github.apiUrl,
      OPENAI_API_KEY: 'sk-unreachable',
      OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
      EMEND_LLM_MAX_RETRIES: '0',
    };
    if (inject('dbKind') === 'pglite') return cliEnv(base);
    const url = postgresUrlOf(await openTestDatabase())!;
    return cliEnv({ ...base, DATABASE_URL: url, EMEND_SECRET_KEY: randomBytes(32).toString('hex') });
  }

  async function serve(env: NodeJS.ProcessEnv, args: string[] = []) {
    const port = await freePort();
    const server: CliProcess = startCli(['serve', '--port', String(port), '--host', '127.0.0.1', ...args], env);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server, 90_000);
    return baseUrl;
  }

  async function statusOf(baseUrl: string, token: string, id: string) {
    const res = await fetch(`${baseUrl}/v1/tasks/${id}`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { task: { status: string; error: string | null } }).task;
  }

  async function waitForEnd(baseUrl: string, token: string, id: string) {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const task = await statusOf(baseUrl, token, id);
      if (['done', 'failed', 'cancelled'].includes(task.status)) return task;
      if (Date.now() > deadline) throw new Error(`task still ${task.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  async function createTask(baseUrl: string, token: string) {
    const res = await fetch(`${baseUrl}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'fix the bug', repo_url: 'https://github.com/a/b' }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  it('serve runs a worker that takes tasks up', async () => {
    const env = await environment();
    const baseUrl = await serve(env);
    const { token } = jsonLine<{ token: string }>(
      await runCli(['accounts', 'create', '--email', 'w@example.com', '--plan', 'free'], env),
    );
    const id = await createTask(baseUrl, token);
    const task = await waitForEnd(baseUrl, token, id);
    // the production planner ran: its model cannot be reached
    expect(task).toMatchObject({ status: 'failed', error: expect.stringContaining('planner failed') });
  });

  it('serve --no-worker leaves tasks queued until an `emend worker` process joins', async () => {
    const env = await environment();
    const baseUrl = await serve(env, ['--no-worker']);
    const { token } = jsonLine<{ token: string }>(
      await runCli(['accounts', 'create', '--email', 'n@example.com', '--plan', 'free'], env),
    );
    const id = await createTask(baseUrl, token);
    await new Promise((r) => setTimeout(r, 1500));
    expect((await statusOf(baseUrl, token, id)).status).toBe('pending');
    startCli(['worker'], env);
    const task = await waitForEnd(baseUrl, token, id);
    expect(task.error).toContain('planner failed');
  });
});
