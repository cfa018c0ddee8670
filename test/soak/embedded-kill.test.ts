import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  cliEnv,
  copyOfDataDir,
  freePort,
  jsonLine,
  killAll,
  newDataDir,
  removeDataDirs,
  runCli,
  startCli,
  waitForHealth,
} from '../cli/cli-process.js';

// The embedded default (PGlite under the data dir) killed with SIGKILL while it is being
// written to: after a restart on the same data dir, everything it answered 2xx is there.
// (What survives a power loss is another matter: docs/operations.md, "Durability".)
describe('the embedded database after a SIGKILL', { timeout: 180_000 }, () => {
  let template: string;
  beforeAll(async () => {
    // initdb in WASM takes a while on a busy machine: once, then the test works on a copy.
    template = newDataDir();
    expect((await runCli(['migrate'], cliEnv({ EMEND_DATA_DIR: template }), 120_000)).code).toBe(0);
  }, 150_000);
  afterEach(killAll);
  afterAll(async () => {
    await killAll();
    removeDataDirs();
  });

  async function serve(dataDir: string) {
    const port = await freePort();
    const server = startCli(
      ['serve', '--no-worker'],
      // A managed key, never called (no worker): task creation refuses a task no model could run.
      cliEnv({
        EMEND_DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        OPENAI_API_KEY: 'sk-unused',
        OPENAI_BASE_URL: 'http://127.0.0.1:1/v1',
      }),
    );
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server, 90_000);
    return { server, baseUrl };
  }

  it('keeps every write it answered 2xx', async () => {
    const dataDir = copyOfDataDir(template);
    const created = jsonLine<{ token: string }>(
      await runCli(
        ['accounts', 'create', '--email', 'kill@example.com', '--plan', 'scale', '--credits', '10'],
        cliEnv({ EMEND_DATA_DIR: dataDir }),
        90_000,
      ),
    );
    const headers = { authorization: `Bearer ${created.token}`, 'content-type': 'application/json' };
    const first = await serve(dataDir);

    // Four clients write as fast as the server answers: tokens, and scaffold tasks (no code
    // host needed) up to the plan's cap of active tasks. The kill comes while writes are in flight.
    const tokens: string[] = [];
    const tasks: string[] = [];
    let stop = false;
    let seq = 0;
    const client = async () => {
      while (!stop) {
        const n = seq++;
        const asTask = n % 8 === 0 && tasks.length < 5;
        const res = await fetch(`${first.baseUrl}${asTask ? '/v1/tasks' : '/v1/me/tokens'}`, {
          method: 'POST',
          headers,
          body: JSON.stringify(
            asTask ? { task_type: 'scaffold', prompt: `a one-page site for bakery number ${n}` } : { name: `t${n}` },
          ),
        }).catch(() => undefined);
        if (!res) return; // the server is gone
        const body = (await res.json().catch(() => undefined)) as { id?: string } | undefined;
        if (res.status >= 200 && res.status < 300) {
          if (asTask) tasks.push(body!.id!);
          else tokens.push(`t${n}`);
        }
      }
    };
    const clients = Array.from({ length: 4 }, client);
    while (tokens.length < 40) await new Promise((r) => setTimeout(r, 20));
    first.server.child.kill('SIGKILL');
    stop = true;
    await Promise.all(clients);
    expect((await first.server.exited).signal).toBe('SIGKILL');
    const answered = { tokens: [...tokens], tasks: [...tasks] };
    expect(answered.tasks.length).toBeGreaterThan(0);

    const second = await serve(dataDir);
    const listed = (await (await fetch(`${second.baseUrl}/v1/me/tokens`, { headers })).json()) as {
      name: string | null;
    }[];
    const names = new Set(listed.map((t) => t.name));
    expect(answered.tokens.filter((n) => !names.has(n))).toEqual([]);
    const ids = new Set(
      ((await (await fetch(`${second.baseUrl}/v1/tasks`, { headers })).json()) as { id: string }[]).map((t) => t.id),
    );
    expect(answered.tasks.filter((id) => !ids.has(id))).toEqual([]);
  });
});
