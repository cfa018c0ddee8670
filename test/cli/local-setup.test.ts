import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { authenticateToken } from '../../src/accounts/authenticate.js';
import { systemClock } from '../../src/clock.js';
import { loadConfig } from '../../src/config/config.js';
import { openClientDatabase } from '../../src/db/open.js';
import { type Harness, startHarness } from '../support/harness.js';
import { emendNodeArgs } from '../support/emend-process.js';
import { freePort } from '../support/ports.js';
import { type Exit, cliEnv, killAll, newDataDir, removeDataDirs, runCli } from './cli-process.js';

const dirs: string[] = [];

/** `emend ARGS` run in `cwd` (where a default ./data would be made), from source. */
function runIn(cwd: string, args: string[], env: NodeJS.ProcessEnv): Promise<Exit> {
  const child: ChildProcess = spawn(process.execPath, [...emendNodeArgs(), ...args], {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((done) => child.once('close', (code, signal) => done({ code, signal, stdout, stderr })));
}

// The local commands a newcomer runs first: help for each group, a new token for a locked-out
// account, and which data dir a command opened.
describe('local CLI commands', { timeout: 120_000 }, () => {
  afterAll(async () => {
    await killAll();
    removeDataDirs();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it.each([
    ['accounts', 'emend accounts token --email E'],
    ['env', 'emend env list [--json] | purge'],
    ['sandbox', 'emend sandbox exec --workdir DIR'],
    ['validate', 'emend validate --repo DIR'],
    ['serve', 'emend serve [--port N]'],
    ['migrate', 'emend migrate'],
    ['locate', 'emend locate --repo DIR'],
    ['eval', 'emend eval --dataset F'],
  ])('emend %s --help prints its usage and exits 0', async (command, line) => {
    const exit = await runCli([command, '--help'], cliEnv({ EMEND_DATA_DIR: newDataDir() }));
    expect(exit.code, exit.stderr).toBe(0);
    expect(exit.stdout).toContain(line);
    expect(exit.stderr).toBe('');
    // -h and a subcommand's --help too
    const sub = await runCli([command, 'list', '-h'], cliEnv({ EMEND_DATA_DIR: newDataDir() }));
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain(line);
  });

  it('issues a new token for an existing account, shown once, and names the data dir it opened', async () => {
    const dataDir = newDataDir();
    const env = cliEnv({ EMEND_DATA_DIR: dataDir });
    const made = await runCli(['accounts', 'create', '--email', 'lost@example.com'], env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toBe(`emend: data dir ${dataDir} (opened directly)\n`);
    const first = JSON.parse(made.stdout).token as string;

    const issued = await runCli(['accounts', 'token', '--email', 'lost@example.com', '--name', 'laptop'], env);
    expect(issued.code, issued.stderr).toBe(0);
    const out = JSON.parse(issued.stdout);
    expect(out).toMatchObject({ email: 'lost@example.com', name: 'laptop', expires_at: null });
    expect(out.token).toMatch(/^tk_/);
    expect(out.token).not.toBe(first);
    expect(issued.stderr).not.toContain(out.token);

    const unknown = await runCli(['accounts', 'token', '--email', 'nobody@example.com'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('no account with email nobody@example.com');

    // both tokens work: the old one is not revoked, the new one signs in
    const database = await openClientDatabase(loadConfig({ EMEND_DATA_DIR: dataDir }));
    try {
      const deps = { db: database.db, clock: systemClock };
      expect((await authenticateToken(deps, out.token)).auth.account.email).toBe('lost@example.com');
      expect((await authenticateToken(deps, first)).auth.account.email).toBe('lost@example.com');
    } finally {
      await database.close();
    }
  });

  it('refuses to create a new ./data where an emend server answers on PORT, unless the data dir is named', async () => {
    let h: Harness | undefined;
    try {
      h = await startHarness();
      const port = await freePort();
      await h.app.listen({ host: '127.0.0.1', port });
      const cwd = mkdtempSync(join(tmpdir(), 'emend-cwd-'));
      dirs.push(cwd);
      const env = cliEnv({ PORT: String(port) });
      const refused = await runIn(cwd, ['accounts', 'create', '--email', 'stray@example.com'], env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        `emend: there is no data dir at ${join(cwd, 'data')}, and an emend server answers on http://127.0.0.1:${port}`,
      );
      expect(refused.stdout).toBe('');
      expect(existsSync(join(cwd, 'data'))).toBe(false);

      const named = await runIn(cwd, ['accounts', 'create', '--email', 'stray@example.com', '--data-dir', 'data'], env);
      expect(named.code, named.stderr).toBe(0);
      expect(named.stderr).toBe(`emend: data dir ${join(cwd, 'data')} (opened directly)\n`);
      // now it exists: the same command without the flag opens it
      const again = await runIn(cwd, ['accounts', 'token', '--email', 'stray@example.com'], env);
      expect(again.code, again.stderr).toBe(0);
    } finally {
      await h?.close();
    }
  });
});
