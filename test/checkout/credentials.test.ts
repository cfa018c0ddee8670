import { chmodSync, existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareCheckout } from '../../src/checkout/checkout.js';
import { TaskCheckoutError } from '../../src/checkout/errors.js';
import { gitEnvOf } from '../../src/checkout/layout.js';
import { authHeaderValue, gitInvocation, scrub } from '../../src/checkout/git.js';
import { mirrorPath } from '../../src/checkout/mirrors.js';
import { filesContaining, useCheckoutTestbed } from './fixture.js';

const TOKEN = 'ghs_T0kenForTheTestsOnly1234567890abcd';
const BASIC = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
const FORMS = [TOKEN, BASIC];

describe('checkouts: credentials for private repositories', () => {
  const bed = useCheckoutTestbed();
  let seq = 0;
  const taskId = () => `cred-${++seq}`;

  it('fails clearly without the token or with a wrong one, and succeeds with it', async () => {
    const commit = bed.server.createRepo('acme', 'private', {
      files: { 'secret-sauce.txt': 'ketchup\n' },
      token: TOKEN,
    });
    const url = bed.server.repoUrl('acme', 'private');

    const without = await prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' }).catch(
      (e) => e,
    );
    expect(without).toBeInstanceOf(TaskCheckoutError);
    expect(without).toMatchObject({
      reason: 'auth',
      message: `cannot fetch ${url}: the repository is private or needs credentials, and no token was given`,
    });
    // A refused first fetch leaves no mirror (nor a half-made one) behind.
    expect(existsSync(mirrorPath(bed.fx.dataDir, url))).toBe(false);
    expect(
      readdirSync(join(bed.fx.dataDir, 'mirrors', `127.0.0.1_${new URL(bed.server.baseUrl).port}`, 'acme')),
    ).toEqual(['private.git.lock']);

    const wrongToken = 'ghs_wrongwrongwrong';
    const wrong = await prepareCheckout(bed.fx.deps, {
      taskId: taskId(),
      repoUrl: url,
      baseBranch: 'main',
      token: wrongToken,
    }).catch((e) => e);
    expect(wrong).toMatchObject({
      reason: 'auth',
      message: expect.stringContaining('the code host refused the token'),
    });
    expect(wrong.message).not.toContain(wrongToken);
    expect(wrong.message).not.toContain(Buffer.from(`x-access-token:${wrongToken}`).toString('base64'));

    bed.server.requests.length = 0;
    const ws = await prepareCheckout(bed.fx.deps, {
      taskId: taskId(),
      repoUrl: url,
      baseBranch: 'main',
      token: TOKEN,
    });
    expect(ws.baseCommit).toBe(commit);
    expect(readFileSync(join(ws.dir, 'secret-sauce.txt'), 'utf8')).toBe('ketchup\n');
    // Every request of the fetch carried the token as a header, sent up front; none in a URL.
    expect(bed.server.requests.length).toBeGreaterThanOrEqual(2);
    for (const r of bed.server.requests) {
      expect(r.authorization).toBe(`Basic ${BASIC}`);
      expect(r.status).toBe(200);
      expect(`${r.path}?${r.query}`).not.toContain(TOKEN);
    }

    // Later tasks fetch the mirror with the token again; without it they are refused.
    bed.server.commit('acme', 'private', { branch: 'main', files: { 'more.txt': 'more\n' } });
    await expect(
      prepareCheckout(bed.fx.deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main' }),
    ).rejects.toMatchObject({ reason: 'auth' });
    const again = await prepareCheckout(bed.fx.deps, {
      taskId: taskId(),
      repoUrl: url,
      baseBranch: 'main',
      token: TOKEN,
    });
    expect(readFileSync(join(again.dir, 'more.txt'), 'utf8')).toBe('more\n');
    await ws.dispose();
    await again.dispose();
  });

  it('never writes the token to disk, a log line, an error message or git’s argv', async () => {
    bed.server.createRepo('acme', 'hidden', { token: TOKEN });
    const url = bed.server.repoUrl('acme', 'hidden');
    // A git that records its arguments before running the real one.
    const argvLog = join(bed.fx.dataDir, 'argv.log');
    const wrapper = join(bed.fx.dataDir, 'git-wrapper.sh');
    writeFileSync(wrapper, `#!/bin/sh\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec git "$@"\n`);
    chmodSync(wrapper, 0o755);
    const deps = { ...bed.fx.deps, git: wrapper };

    const ws = await prepareCheckout(deps, { taskId: taskId(), repoUrl: url, baseBranch: 'main', token: TOKEN });
    const failed = await prepareCheckout(deps, {
      taskId: taskId(),
      repoUrl: url,
      baseBranch: 'no-such-branch',
      token: TOKEN,
    }).catch((e) => e);
    expect(failed).toMatchObject({ reason: 'missing_branch' });

    const argv = readFileSync(argvLog, 'utf8');
    expect(argv).toContain(
      `fetch --quiet --prune --no-tags --no-recurse-submodules --no-write-fetch-head -- ${url} ` +
        `+refs/heads/*:refs/heads/*`,
    );
    for (const form of FORMS) {
      expect(argv).not.toContain(form);
      expect(bed.fx.logLines.join('\n')).not.toContain(form);
      expect(String(failed.message)).not.toContain(form);
    }
    expect(bed.fx.logLines.length).toBeGreaterThan(0);
    // Not in the mirror, the task's git dir, the files, git's HOME or anywhere else under the data dir.
    expect(filesContaining(bed.fx.dataDir, FORMS)).toEqual([]);
    expect(readFileSync(join(ws.gitDir, 'config'), 'utf8')).not.toContain('extraHeader');
    expect(readFileSync(join(mirrorPath(bed.fx.dataDir, url), 'config'), 'utf8')).not.toContain('extraHeader');
    expect(readdirSync(join(bed.fx.dataDir, 'git-home'))).toEqual([]);
    await ws.dispose();
  });

  it('builds argv without the token and passes it as an http.extraHeader scoped to the code host', () => {
    const env = gitEnvOf(bed.fx.deps);
    const inv = gitInvocation(env, {
      args: ['fetch', '--', 'https://github.com/acme/private.git', '+refs/heads/*:refs/heads/*'],
      gitDir: '/data/mirrors/github.com/acme/private.git',
      remote: { url: 'https://github.com/acme/private.git', token: TOKEN },
    });
    expect(inv.command).toBe('git');
    expect(inv.args.join(' ')).not.toMatch(new RegExp(FORMS.join('|')));
    const config = Object.fromEntries(
      Array.from({ length: Number(inv.env.GIT_CONFIG_COUNT) }, (_, i) => [
        inv.env[`GIT_CONFIG_KEY_${i}`],
        inv.env[`GIT_CONFIG_VALUE_${i}`],
      ]),
    );
    expect(config['http.https://github.com/.extraHeader']).toBe(`Authorization: ${authHeaderValue(TOKEN)}`);
    expect(authHeaderValue(TOKEN)).toBe(`Basic ${BASIC}`);
    // The token is in that one variable and no other.
    const holders = Object.entries(inv.env)
      .filter(([, v]) => FORMS.some((f) => v.includes(f)))
      .map(([k]) => k);
    expect(holders).toHaveLength(1);
    expect(holders[0]).toMatch(/^GIT_CONFIG_VALUE_\d+$/);
    expect(inv.env).toMatchObject({
      HOME: env.home,
      XDG_CONFIG_HOME: env.home,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
    });
    expect(inv.env.GIT_ASKPASS).toBeUndefined();
    expect(config).toMatchObject({
      'core.hooksPath': '/dev/null',
      'core.fsmonitor': 'false',
      'submodule.recurse': 'false',
      'fetch.recurseSubmodules': 'false',
      'protocol.allow': 'never',
      'protocol.https.allow': 'always',
      'protocol.http.allow': 'always',
      'protocol.file.allow': 'never',
      'credential.helper': '',
      'safe.directory': '/data/mirrors/github.com/acme/private.git',
    });

    // No token: no header at all; a local path (tests, development) may use the file transport.
    const local = gitInvocation(env, { args: ['fetch'], remote: { url: '/srv/repos/a.git' } });
    const localKeys = Array.from(
      { length: Number(local.env.GIT_CONFIG_COUNT) },
      (_, i) => local.env[`GIT_CONFIG_KEY_${i}`],
    );
    expect(localKeys.some((k) => k?.endsWith('.extraHeader'))).toBe(false);
    expect(local.env[`GIT_CONFIG_VALUE_${localKeys.indexOf('protocol.file.allow')}`]).toBe('always');
  });

  it('scrubs every form of the token from text', () => {
    const text = `fatal: x ${TOKEN} y ${BASIC} z ${encodeURIComponent(TOKEN)}`;
    expect(scrub(text, TOKEN)).toBe('fatal: x *** y *** z ***');
    expect(scrub('nothing', undefined)).toBe('nothing');
  });
});
