import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { cliEnv, freePort, killAll, newDataDir, removeDataDirs, startCli, waitForHealth } from './cli-process.js';
import { emendNodeArgs } from '../support/emend-process.js';

// Issue 45, point 3: `emend serve` on a terminal prints a short banner in words (the panel, the
// API docs, what to fix); in a pipe it keeps to JSON lines, with the same facts, for a log collector.
// The terminal is a real pseudo-terminal: util-linux's `script` runs the CLI under one.

const repoRoot = resolve(import.meta.dirname, '../..');
const underTerminal = new Set<ChildProcess>();

afterEach(async () => {
  await killAll();
  for (const child of underTerminal) {
    // `script` leads its own process group: the CLI under it goes with it.
    if (child.exitCode === null && child.pid) process.kill(-child.pid, 'SIGKILL');
  }
  underTerminal.clear();
});
afterAll(removeDataDirs);

/** `emend serve` under a pseudo-terminal; resolves with what the terminal showed once the banner is complete. */
function serveOnTerminal(port: number, env: NodeJS.ProcessEnv): Promise<string> {
  const command = [
    process.execPath,
    ...emendNodeArgs(),
    'serve',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--no-worker',
  ].join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: repoRoot,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  underTerminal.add(child);
  let shown = '';
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`no banner after 90 s; the terminal showed:\n${shown}`)), 90_000);
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      shown += d;
      if (shown.includes('Logs follow')) {
        clearTimeout(timer);
        done(shown.replaceAll('\r', ''));
      }
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      fail(new Error(`the server under the terminal exited (${code}):\n${shown}`));
    });
  });
}

describe('emend serve says where it is', { timeout: 120_000 }, () => {
  it('on a terminal: a banner with the panel, the API docs and the missing model key, not the JSON start-up line', async () => {
    const port = await freePort();
    const shown = await serveOnTerminal(port, cliEnv({ EMEND_DATA_DIR: newDataDir(), LOG_LEVEL: 'info' }));
    expect(shown).toContain(`emend is serving on http://127.0.0.1:${port}`);
    expect(shown).toContain(`Control panel  http://localhost:${port}/app/`);
    expect(shown).toContain(`API docs       http://localhost:${port}/docs`);
    expect(shown).toMatch(/Warning: no model provider key is set .*Account → Provider keys/);
    expect(shown).toContain('`npx emend serve` starts it again without rebuilding');
    // Said once, in words: the facts of the banner are not repeated as a JSON line.
    expect(shown).not.toContain('"msg":"emend is serving"');
  });

  it('in a pipe: JSON lines only, the start-up line naming the panel and the docs, the warning a warn line', async () => {
    const port = await freePort();
    const server = startCli(
      ['serve', '--port', String(port), '--host', '127.0.0.1', '--no-worker'],
      cliEnv({ EMEND_DATA_DIR: newDataDir(), LOG_LEVEL: 'info' }),
    );
    await waitForHealth(`http://127.0.0.1:${port}`, server, 90_000);
    const deadline = Date.now() + 10_000;
    while (!server.stdout.includes('emend is serving') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const lines = server.stdout.split('\n').filter((l) => l.trim() !== '');
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(server.stdout).not.toContain('Control panel');
    expect(records).toContainEqual(
      expect.objectContaining({
        msg: 'emend is serving',
        panel: `http://localhost:${port}/app/`,
        docs: `http://localhost:${port}/docs`,
      }),
    );
    expect(records).toContainEqual(
      expect.objectContaining({ level: 40, warning: expect.stringContaining('no model provider key is set') }),
    );
  });
});
