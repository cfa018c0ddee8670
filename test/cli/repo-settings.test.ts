import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoSettingsFor } from '../../src/repos/repo-settings.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { killRemotes, remoteEnv, removeConfigDirs, runRemote } from './remote-process.js';

// `emend repo ...` as users run it: a process against the service on a real port.
let h: Harness;
let url: string;
const REPO = 'https://github.com/acme/widgets';
const SECRET = 'npm_CLISECRET_abcdef0123456789';

beforeAll(async () => {
  h = await startHarness();
  url = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await killRemotes();
  await h?.close();
  removeConfigDirs();
});

// Nineteen CLI processes one after another, each a Node start that compiles the CLI's sources
// (about 1.5 s each on an idle 2-core machine): more than the default 30 s per test.
describe('emend repo', { timeout: 120_000 }, () => {
  it('settings set, show and unset; secrets set from stdin, list and delete; errors exit 3 and 64', async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const env = remoteEnv({ server: url, token: owner.token });
    const run = (args: string[], input = '') => runRemote(args, env, input);

    const none = await run(['repo', 'settings', 'show', '--repo', REPO]);
    expect(none.code).toBe(3);
    expect(none.stderr).toMatch(/no settings or secrets for .*\(not_found, HTTP 404, request /);
    const noSecrets = await run(['repo', 'secrets', 'list', '--repo', REPO]);
    expect(noSecrets.code).toBe(3);
    expect(noSecrets.stderr).toMatch(/no settings or secrets for .*\(not_found, HTTP 404, request /);

    const set = await run([
      'repo',
      'settings',
      'set',
      '--repo',
      REPO,
      '--setup',
      'make deps',
      '--test',
      'make test',
      '--env',
      'NODE_ENV=test',
      '--env',
      'URL=a=b',
    ]);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^setup:\s+make deps$/m);
    expect(set.stdout).toMatch(/^env:\s+NODE_ENV=test URL=a=b$/m);

    const saved = await run(['repo', 'secrets', 'set', '--repo', REPO, 'NPM_TOKEN'], `${SECRET}\n`);
    expect(saved.code, saved.stderr).toBe(0);
    expect(saved.stdout).toContain('saved the secret NPM_TOKEN');
    expect((await repoSettingsFor(h.deps, owner.account.id, REPO)).setupSecrets).toEqual({ NPM_TOKEN: SECRET });

    const listed = await run(['repo', 'secrets', 'list', '--repo', REPO, '--json']);
    expect(JSON.parse(listed.stdout).map((s: { name: string }) => s.name)).toEqual(['NPM_TOKEN']);
    const shown = await run(['repo', 'settings', 'show', '--repo', REPO]);
    expect(shown.stdout).toMatch(/^secrets:\s+NPM_TOKEN$/m);
    const repos = await run(['repo', 'list']);
    expect(repos.stdout).toMatch(/acme\/widgets\s+1\s/);
    for (const out of [saved, listed, shown, repos]) expect(out.stdout + out.stderr).not.toContain(SECRET);

    // a secret's value is never an argument: an extra word is a usage error, and nothing is sent
    const onArgv = await run(['repo', 'secrets', 'set', '--repo', REPO, 'OTHER', 'the-value']);
    expect(onArgv.code).toBe(64);
    const empty = await run(['repo', 'secrets', 'set', '--repo', REPO, 'OTHER'], '');
    expect(empty.code).toBe(64);
    expect(empty.stderr).toContain('no value given');
    expect((await repoSettingsFor(h.deps, owner.account.id, REPO)).setupSecrets).toEqual({ NPM_TOKEN: SECRET });

    const refused = await run(['repo', 'settings', 'set', '--repo', REPO, '--env', 'PATH=/evil']);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('env.PATH: PATH is set by the sandbox');
    expect((await run(['repo', 'settings', 'set', '--repo', REPO, '--env', 'NOEQUALS'])).code).toBe(64);
    expect((await run(['repo', 'settings', 'set', '--repo', REPO])).code).toBe(64);
    expect((await run(['repo', 'settings', 'show'])).code).toBe(64);
    const elsewhere = await run(['repo', 'settings', 'show', '--repo', 'https://example.com/a/b']);
    expect(elsewhere.code).toBe(3);
    expect(elsewhere.stderr).toContain('not_a_scm_url');

    const unset = await run(['repo', 'settings', 'unset', '--repo', REPO, '--test', '--env', 'URL']);
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.stdout).toMatch(/^test:\s+\(none\)$/m);
    expect(unset.stdout).toMatch(/^env:\s+NODE_ENV=test$/m);
    expect((await run(['repo', 'secrets', 'delete', '--repo', REPO, 'NPM_TOKEN'])).code).toBe(0);
    const again = await run(['repo', 'secrets', 'delete', '--repo', REPO, 'NPM_TOKEN']);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('not_found');
    expect((await run(['repo', 'settings', 'unset', '--repo', REPO, '--all'])).code).toBe(0);
    expect((await run(['repo', 'list'])).stdout).toContain('no repository settings');
  });

  it('settings set --attempts: the default attempts of the repository, within the plan; unset --attempts clears it', async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const env = remoteEnv({ server: url, token: owner.token });
    const run = (args: string[]) => runRemote(args, env);
    const set = await run(['repo', 'settings', 'set', '--repo', REPO, '--attempts', '3']);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^attempts:\s+3$/m);
    const tooMany = await run(['repo', 'settings', 'set', '--repo', REPO, '--attempts', '4']);
    expect(tooMany.code).toBe(3);
    expect(tooMany.stderr).toContain('attempts: the pro plan allows at most 3 attempts per task (asked for 4)');
    expect((await run(['repo', 'settings', 'set', '--repo', REPO, '--attempts', '0'])).code).toBe(64);
    const unset = await run(['repo', 'settings', 'unset', '--repo', REPO, '--attempts']);
    expect(unset.code, unset.stderr).toBe(0);
    // Nothing else was set: the settings are gone with it.
    expect(unset.stdout).toMatch(/^attempts:\s+1 \(default\)$/m);
  });
});
