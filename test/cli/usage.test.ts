import { afterAll, describe, expect, it } from 'vitest';
import { cliEnv, killAll, newDataDir, removeDataDirs, runCli } from './cli-process.js';

// Usage errors are caught before any database is opened, so one project runs them.
describe('emend CLI usage', { timeout: 30_000, concurrent: true }, () => {
  const env = () => cliEnv({ EMEND_DATA_DIR: newDataDir() });
  // Not afterEach: these run concurrently, and one test's end must not kill another's process.
  afterAll(async () => {
    await killAll();
    removeDataDirs();
  });

  it.each([
    [[], /no command given/],
    [['frobnicate'], /unknown command "frobnicate"/],
    [['accounts'], /accounts needs a command/],
    [['accounts', 'delete', '--email', 'a@example.com'], /unknown accounts command "delete"/],
    [['accounts', 'create'], /accounts create needs --email/],
    [
      ['accounts', 'create', '--email', 'a@example.com', '--plan', 'bogus'],
      /--plan expects free, pro or scale, got "bogus"/,
    ],
    [['accounts', 'create', '--email', 'a@example.com', '--plan', 'demo'], /--plan expects free, pro or scale/],
    [
      ['accounts', 'create', '--email', 'a@example.com', '--credits=-3'],
      /--credits expects a non-negative integer, got "-3"/,
    ],
    [
      ['accounts', 'set', '--email', 'a@example.com', '--credits', 'lots'],
      /--credits expects a non-negative integer, got "lots"/,
    ],
    [['accounts', 'create', '--email', 'a@example.com', '--colour', 'red'], /--colour/],
    [['accounts', 'create', '--email'], /--email/],
    [['accounts', 'set', '--email', 'a@example.com'], /accounts set needs --plan or --credits/],
    [['serve', 'now'], /now/],
    [['serve', '--port', 'abc'], /--port expected an integer, got "abc"/],
    [['migrate', '--force'], /--force/],
  ])('emend %j exits 2 with a message and the usage', async (args, message) => {
    const exit = await runCli(args as string[], env());
    expect(exit.code, exit.stderr).toBe(2);
    expect(exit.stderr).toMatch(message);
    expect(exit.stderr).toContain('usage:');
    expect(exit.stdout).toBe('');
  });

  it('prints the usage on help, exit 0', async () => {
    const exit = await runCli(['help'], env());
    expect(exit.code).toBe(0);
    expect(exit.stdout).toContain('emend accounts create --email E');
  });

  it.each([
    [{ PORT: 'abc' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ EMEND_BASE_URL: 'not a url' }, 'EMEND_BASE_URL'],
  ])('emend serve with %j stops naming %s', async (vars, variable) => {
    const exit = await runCli(['serve'], cliEnv({ EMEND_DATA_DIR: newDataDir(), ...vars }));
    expect(exit.code).not.toBe(0);
    expect(exit.stderr).toContain(`bad configuration: ${variable}:`);
  });
});
