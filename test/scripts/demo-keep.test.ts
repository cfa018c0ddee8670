import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { killRemotes, remoteEnv, removeConfigDirs, runRemote } from '../cli/remote-process.js';

const ROOT = resolve(import.meta.dirname, '../..');

// `npm run demo -- --keep` as a person runs it: the task ends in a pull request on the fake GitHub,
// then everything stays up with a token, the panel's address and the login line until Ctrl-C.
describe('npm run demo -- --keep', () => {
  afterAll(async () => {
    await killRemotes();
    removeConfigDirs();
  });

  it('opens a pull request, keeps the service up with what to type, and stops on Ctrl-C', {
    timeout: 240_000,
  }, async () => {
    const child = spawn(resolve(ROOT, 'node_modules/.bin/tsx'), ['scripts/demo.ts', '--keep'], {
      cwd: ROOT,
      env: { ...process.env, EMEND_SANDBOX: 'bubblewrap', LOG_LEVEL: 'warn' },
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.resume();
    const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
    try {
      const deadline = Date.now() + 200_000;
      while (!/^ {2}CLI: .*$/m.test(stdout)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no login line in:\n${stdout}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(stdout).toContain('task done');
      const pr = /^pull request: (http:\/\/127\.0\.0\.1:\d+\/acme\/calc\/pull\/1) \(on the fake GitHub\)$/m.exec(
        stdout,
      );
      expect(pr, stdout).not.toBeNull();
      const login = /^ {2}CLI: {4}echo (tk_\S+) \| npx emend login --server (http:\/\/127\.0\.0\.1:\d+)$/m.exec(stdout);
      expect(login, stdout).not.toBeNull();
      const [, token, server] = login!;
      expect(stdout).toContain(`  panel:  ${server}/app/`);
      expect(stdout).toContain(`  token:  ${token}`);

      // the printed login works, and the task is there with its pull request
      const env = remoteEnv({});
      const loggedIn = await runRemote(['login', '--server', server!], env, `${token}\n`);
      expect(loggedIn.code, loggedIn.stderr).toBe(0);
      const list = await runRemote(['task', 'list', '--json'], env);
      expect(list.code, list.stderr).toBe(0);
      expect(JSON.parse(list.stdout)).toMatchObject([{ status: 'done', pr_url: pr![1] }]);
      const panel = await fetch(`${server}/app/`);
      expect(panel.status).toBeLessThan(500);
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
    expect(stdout).toContain('\nstopping');
  });
});
