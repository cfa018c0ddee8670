import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { CALC_PLAN, CALC_REPO, stepOf } from '../support/fix-script.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';
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

// SIGTERM stops a process gracefully (docs/operations.md, "Graceful stop"). A worker finishes
// the step it is in and hands the task back; another worker resumes it from the next step. An
// API node ends its event streams with a `retry:` hint, answers GET /ready 503 `draining` and
// finishes the requests in flight. Real `emend` processes on one PostgreSQL (two processes share
// it), a scripted model and a fake GitHub.
describe('graceful stop on SIGTERM', { timeout: 90_000 }, () => {
  let github: FakeGitHub;
  let model: ScriptedModel;
  let releasePlanner = () => {};
  beforeAll(async () => {
    github = await startFakeGitHub();
    model = await startScriptedModel({ validKeys: ['sk-test'] });
    // The planner's answer waits for the test; every later call fails (the locator falls back to
    // its own ranking, the inspector fails the task), so the task ends soon after the hand-back:
    // the second worker's start is what this looks at, not a whole fix.
    model.respond(async (req) => {
      if (stepOf(req) === 'planner') {
        await new Promise<void>((resolve) => {
          releasePlanner = resolve;
        });
        return { json: CALC_PLAN, usage: { input: 100, output: 50 } };
      }
      return { status: 400 };
    });
  });
  afterEach(killAll);
  afterAll(async () => {
    removeDataDirs();
    await model.close();
    await github.close();
  });

  async function environment() {
    const url = postgresUrlOf(await openTestDatabase())!;
    return cliEnv({
      DATABASE_URL: url,
      EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
      EMEND_SCM_API_URL: github.apiUrl,
      EMEND_SCM_WEB_URL: github.webUrl,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.urls.openai,
      EMEND_LLM_MAX_RETRIES: '0',
      EMEND_WORKER_HEARTBEAT_MS: '200',
      EMEND_STOP_GRACE_SECONDS: '20',
      LOG_LEVEL: 'warn',
    });
  }

  async function api(env: NodeJS.ProcessEnv) {
    const port = await freePort();
    const server = startCli(['serve', '--no-worker', '--port', String(port), '--host', '127.0.0.1'], {
      ...env,
      EMEND_DATA_DIR: newDataDir(),
    });
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server, 60_000);
    return { server, baseUrl, port };
  }

  const worker = (env: NodeJS.ProcessEnv): CliProcess => startCli(['worker'], { ...env, EMEND_DATA_DIR: newDataDir() });

  let accounts = 0;
  /** An account connected to the code host, and the body of a task on a repository it may use. */
  async function account(env: NodeJS.ProcessEnv, baseUrl: string) {
    const n = accounts++;
    const token = jsonLine<{ token: string }>(
      await runCli(['accounts', 'create', '--email', `stop${n}@example.com`, '--plan', 'scale', '--credits', '5'], env),
    ).token;
    const user = github.addUser(`stopper${n}`);
    github.createRepo('acme', `calc${n}`, { files: CALC_REPO, collaborators: [user.login] });
    const res = await fetch(`${baseUrl}/v1/me/scm`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ token: user.token }),
    });
    expect(res.status).toBe(200);
    const taskBody = JSON.stringify({ prompt: 'fix the bug in add', repo_url: `${github.webUrl}/acme/calc${n}` });
    return { token, taskBody };
  }

  async function createTask(baseUrl: string, token: string, taskBody: string) {
    const res = await fetch(`${baseUrl}/v1/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: taskBody,
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { id: string }).id;
  }

  async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, ms = 30_000) {
    const deadline = Date.now() + ms;
    for (;;) {
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('a worker finishes its step, exits 0 and hands the task back; another resumes from the next step', async () => {
    const env = await environment();
    const { baseUrl } = await api(env);
    const { token, taskBody } = await account(env, baseUrl);
    const auth = { authorization: `Bearer ${token}` };
    const first = worker(env);
    const id = await createTask(baseUrl, token, taskBody);
    const planners = () => model.calls.filter((c) => stepOf(c) === 'planner').length;
    await until('the planner call', () => (planners() === 1 ? true : undefined), 45_000);

    const signalled = Date.now();
    first.child.kill('SIGTERM');
    // The step goes on after the signal: its answer arrives a moment later and is kept.
    await new Promise((r) => setTimeout(r, 500));
    expect(first.child.exitCode).toBeNull();
    releasePlanner();
    const exit = await first.exited;
    expect({ code: exit.code, stderr: exit.stderr }).toMatchObject({ code: 0 });
    expect(Date.now() - signalled).toBeLessThan(20_000);
    // Handed back: still running, no worker holds it, the planner's output saved.
    const logs = async () =>
      (
        (await (await fetch(`${baseUrl}/v1/tasks/${id}`, { headers: auth })).json()) as {
          logs: { step: string; status: string }[];
        }
      ).logs;
    const afterFirst = await logs();
    expect(afterFirst.filter((l) => l.step === 'planner').map((l) => l.status)).toEqual(['running', 'done']);
    expect(afterFirst.some((l) => l.step === 'locator')).toBe(false);

    worker(env);
    const task = await until('the end of the task', async () => {
      const t = (
        (await (await fetch(`${baseUrl}/v1/tasks/${id}`, { headers: auth })).json()) as {
          task: { status: string; error: string | null; tokens_total: number };
        }
      ).task;
      return ['done', 'failed', 'cancelled'].includes(t.status) ? t : undefined;
    });
    // The second worker started at the locator: the planner ran once, its tokens counted once.
    expect(task.error).toContain('inspector failed');
    expect(planners()).toBe(1);
    const all = await logs();
    expect(all.filter((l) => l.step === 'planner').map((l) => l.status)).toEqual(['running', 'done']);
    expect(all.filter((l) => l.step === 'locator').map((l) => l.status)).toContain('done');
    expect(task.tokens_total).toBe(150);
    // The credit held for the task was released once (it failed): the balance is whole again.
    const me = (await (await fetch(`${baseUrl}/v1/me`, { headers: auth })).json()) as { credits: number };
    expect(me.credits).toBe(5);
  });

  it('an API node ends its event streams with a retry hint, says draining, and finishes a request in flight', async () => {
    const env = await environment();
    const { server, port } = await api(env);
    const baseUrl = `http://127.0.0.1:${port}`;
    const { token, taskBody } = await account(env, baseUrl);
    // No worker: the task stays pending, its stream stays open.
    const id = await createTask(baseUrl, token, taskBody);

    const stream = connect(port, '127.0.0.1');
    let streamed = '';
    stream.setEncoding('utf8').on('data', (d: string) => (streamed += d));
    const streamEnded = new Promise<void>((resolve) => stream.once('close', () => resolve()));
    stream.write(
      `GET /v1/tasks/${id}/logs/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nAccept: text/event-stream\r\n\r\n`,
    );
    await until('the state event', () => (streamed.includes('event: state') ? true : undefined));

    // A request in flight: its body half sent when the signal arrives, and a GET /ready behind it.
    const slow = connect(port, '127.0.0.1');
    let answered = '';
    slow.setEncoding('utf8').on('data', (d: string) => (answered += d));
    const slowEnded = new Promise<void>((resolve) => slow.once('close', () => resolve()));
    const half = Math.floor(taskBody.length / 2);
    slow.write(
      `POST /v1/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(taskBody)}\r\n\r\n${taskBody.slice(0, half)}`,
    );
    await new Promise((r) => setTimeout(r, 300));

    server.child.kill('SIGTERM');
    await streamEnded;
    // The hint is the last thing sent (chunked: then the terminating chunk).
    expect(streamed).toMatch(/\nretry: 1000\n\n\r\n0\r\n\r\n$/);
    expect(streamed).not.toContain('event: end');

    slow.write(`${taskBody.slice(half)}GET /v1/ready HTTP/1.1\r\nHost: x\r\n\r\n`);
    await slowEnded;
    const responses = answered.split(/(?=HTTP\/1\.1 )/);
    expect(responses[0]).toMatch(/^HTTP\/1\.1 201 /);
    expect(responses[1]).toMatch(/^HTTP\/1\.1 503 /);
    expect(responses[1]).toContain('{"ready":false,"reason":"draining"}');

    const exit = await server.exited;
    expect({ code: exit.code, stderr: exit.stderr }).toMatchObject({ code: 0 });
  });
});
