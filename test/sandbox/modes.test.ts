import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SandboxUnavailableError } from '../../src/sandbox/sandbox.js';
import { cliEnv, runCli } from '../cli/cli-process.js';
import { newDir, realSandbox, removeDirs } from './helpers.js';

describe('sandbox modes', () => {
  afterAll(removeDirs);

  it('without bubblewrap reports unavailable and refuses every command, saying what to do', async () => {
    const { sandbox } = await realSandbox({}, { bwrapPath: '/nonexistent/bwrap' });
    const report = sandbox.report();
    expect(report).toMatchObject({ kind: 'unavailable', memoryLimit: false, processLimit: false });
    expect(report.problem).toContain('bubblewrap is required');
    expect(report.problem).toContain('apt-get install bubblewrap');
    expect(report.problem).toContain('EMEND_SANDBOX=unsafe-host');
    const run = sandbox.run({ command: ['true'], workdir: newDir() });
    await expect(run).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(run).rejects.toThrow(/bubblewrap is required.*apt-get install bubblewrap.*EMEND_SANDBOX=unsafe-host/);
  });

  it('unsafe-host runs on the host, says so, and still clears the environment and applies the limits', async () => {
    const { sandbox } = await realSandbox({ EMEND_SANDBOX: 'unsafe-host' });
    expect(sandbox.report()).toMatchObject({ kind: 'unsafe-host' });
    const workdir = newDir();
    process.env.EMEND_SECRET_KEY = 'b'.repeat(64);
    try {
      const result = await sandbox.run({
        command: ['sh', '-c', 'pwd; echo "$HOME"; env | grep -c EMEND_ || true; ulimit -n; echo x > here'],
        workdir,
      });
      expect(result.exitCode, result.stderr).toBe(0);
      expect(result.stdout).toBe(`${workdir}\n${workdir}\n0\n64\n`);
      expect(existsSync(join(workdir, 'here'))).toBe(true);
    } finally {
      delete process.env.EMEND_SECRET_KEY;
    }
    const timed = await sandbox.run({ command: ['sleep', '30'], workdir, limits: { timeoutMs: 300 } });
    expect(timed).toMatchObject({ timedOut: true, signal: 'SIGKILL' });
  });

  describe('emend sandbox exec', () => {
    const env = () => cliEnv({ EMEND_DATA_DIR: newDir(), EMEND_SANDBOX_PROCESSES: '64' });

    it('runs one command as the validator would and exits with its code', async () => {
      const workdir = newDir();
      const exit = await runCli(
        ['sandbox', 'exec', '--workdir', workdir, '--', 'sh', '-c', 'id -u; echo made > out; echo oops >&2; exit 3'],
        env(),
      );
      expect(exit.code, exit.stderr).toBe(3);
      expect(exit.stdout).toBe('1000\n');
      expect(exit.stderr).toContain('oops');
      expect(readFileSync(join(workdir, 'out'), 'utf8')).toBe('made\n');
    });

    it('exits 124 on timeout, and refuses bad usage and network the operator has not allowed', async () => {
      const workdir = newDir();
      const timed = await runCli(
        ['sandbox', 'exec', '--workdir', workdir, '--timeout', '1', '--', 'sleep', '30'],
        env(),
      );
      expect(timed.code).toBe(124);
      expect(timed.stderr).toContain('timed out after 1 s');
      const noDashes = await runCli(['sandbox', 'exec', '--workdir', workdir, 'true'], env());
      expect(noDashes.code).toBe(2);
      expect(noDashes.stderr).toContain('usage: emend sandbox exec');
      const network = await runCli(['sandbox', 'exec', '--workdir', workdir, '--network', '--', 'true'], {
        ...env(),
        EMEND_SANDBOX_SETUP_NETWORK: 'off',
      });
      expect(network.code).toBe(2);
      expect(network.stderr).toContain('EMEND_SANDBOX_SETUP_NETWORK=off');
      const missing = await runCli(['sandbox', 'exec', '--workdir', join(workdir, 'nope'), '--', 'true'], env());
      expect(missing.code).toBe(125);
      expect(missing.stderr).toContain('is not a directory');
    });
  });
});
