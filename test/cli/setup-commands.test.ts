import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { killRemotes, remoteEnv, removeConfigDirs, runRemote } from './remote-process.js';

// `emend scm`, `emend triggers` and `emend settings` as users run them: processes against the
// service on a real port, the fake GitHub as the code host.
let h: Harness;
let url: string;
const CLIENT_ID = 'Iv1.emend-cli-test';
const CLIENT_SECRET = 'oauth-client-secret-cli-0123';

beforeAll(async () => {
  h = await startHarness({
    EMEND_BASE_URL: 'https://emend.example',
    EMEND_SCM_OAUTH_CLIENT_ID: CLIENT_ID,
    EMEND_SCM_OAUTH_CLIENT_SECRET: CLIENT_SECRET,
  });
  h.github.addOAuthApp(CLIENT_ID, CLIENT_SECRET);
  url = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await killRemotes();
  await h?.close();
  removeConfigDirs();
});

describe('workspace setup from the CLI', { timeout: 120_000 }, () => {
  it('connects a code host with a token from stdin, turns triggers on and off, and disconnects', async () => {
    const owner = await newAccount(h, { plan: 'pro', credits: 5, scm: false });
    const env = remoteEnv({ server: url, token: owner.token });
    const run = (args: string[], input = '') => runRemote(args, env, input);

    const before = await run(['triggers', 'on', '--repo', 'https://github.com/someone/widgets']);
    expect(before.code).toBe(3);
    expect(before.stderr).toMatch(/scm_not_connected/);

    const person = h.github.addUser('cli-person');
    h.github.createRepo('cli-person', 'widgets', {});
    const connected = await run(['scm', 'connect'], `${person.token}\n`);
    expect(connected.code, connected.stderr).toBe(0);
    expect(connected.stdout).toBe('connected to github as cli-person\n');
    expect(connected.stdout + connected.stderr).not.toContain(person.token);
    const me = await run(['me']);
    expect(me.stdout).toMatch(/^code host:\s+cli-person$/m);

    const repo = 'https://github.com/cli-person/widgets';
    const on = await run([
      ...['triggers', 'on', '--repo', repo, '--events', 'comments,labels', '--label', 'fix-me'],
      ...['--ci-rounds', '1'],
    ]);
    expect(on.code, on.stderr).toBe(0);
    expect(on.stdout).toMatch(/^CI rounds:\s+1 per pull request$/m);
    expect(on.stdout).toContain(`triggers on for ${repo}`);
    expect(on.stdout).toMatch(/^events:\s+comments, labels$/m);
    expect(on.stdout).toMatch(/^label:\s+fix-me$/m);
    expect(on.stdout).toMatch(/^hook URL:\s+https:\/\/emend\.example\/v1\/hooks\/github\//m);
    expect(h.github.hooks('cli-person', 'widgets')).toHaveLength(1);
    const shown = await run(['triggers', 'show', '--repo', repo, '--json']);
    expect(JSON.parse(shown.stdout)).toMatchObject({
      repo,
      label: 'fix-me',
      events: ['comments', 'labels'],
      ci_rounds: 1,
    });
    const badRounds = await run(['triggers', 'on', '--repo', repo, '--ci-rounds', '3']);
    expect(badRounds.code).toBe(64);
    expect(badRounds.stderr).toMatch(/a whole number from 0 \(off\) to 2/);
    const badEvent = await run(['triggers', 'on', '--repo', repo, '--events', 'pushes']);
    expect(badEvent.code).toBe(64);
    expect(badEvent.stderr).toMatch(/unknown event pushes; events are comments, labels, reviews/);

    const off = await run(['triggers', 'off', '--repo', repo]);
    expect(off.code, off.stderr).toBe(0);
    expect(off.stdout).toContain(`triggers off for ${repo}`);
    expect(h.github.hooks('cli-person', 'widgets')).toEqual([]);
    const gone = await run(['triggers', 'show', '--repo', repo]);
    expect(gone.code).toBe(3);

    const disconnected = await run(['scm', 'disconnect']);
    expect(disconnected.code, disconnected.stderr).toBe(0);
    expect(disconnected.stdout).toContain('disconnected from github');
    expect((await run(['me'])).stdout).toMatch(/^code host:\s+not connected$/m);
  });

  it('prints the OAuth address and what to do with the code it shows', async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const env = remoteEnv({ server: url, token: owner.token });
    const started = await runRemote(['scm', 'oauth'], env);
    expect(started.code, started.stderr).toBe(0);
    const link = new URL(started.stdout.trim());
    expect(`${link.origin}${link.pathname}`).toBe('https://github.com/login/oauth/authorize');
    expect(link.searchParams.get('client_id')).toBe(CLIENT_ID);
    expect(started.stderr).toContain('run `emend scm confirm CODE` within 10 minutes');
    const wrong = await runRemote(['scm', 'confirm', 'AAAA-BBBB'], env);
    expect(wrong.code).toBe(3);
  });

  it("shows and sets the workspace's default fixer and approval mode", async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const env = remoteEnv({ server: url, token: owner.token });
    const shown = await runRemote(['settings', 'show'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^approval mode:\s+auto$/m);
    expect(shown.stdout).toMatch(/^fixer:\s+the server's default$/m);
    const set = await runRemote(['settings', 'set', '--fixer', 'agent', '--approval', 'manual', '--json'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ approval_mode: 'manual', fixer: 'agent' });
    const back = await runRemote(['settings', 'set', '--fixer', 'default'], env);
    expect(back.stdout).toMatch(/^fixer:\s+the server's default$/m);
    const none = await runRemote(['settings', 'set'], env);
    expect(none.code).toBe(64);
    expect(none.stderr).toContain('nothing to set (give --fixer or --approval)');
    const bad = await runRemote(['settings', 'set', '--fixer', 'robot'], env);
    expect(bad.code).toBe(64);
  });
});
