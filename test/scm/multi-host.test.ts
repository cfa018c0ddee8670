import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { checkOpenPulls } from '../../src/tasks/merge-tracking.js';
import { hostEntry } from '../support/code-hosts.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { scriptCalcRun, CALC_REPO, GOOD_FIX } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';

/**
 * Two code hosts in one deployment (EMEND_SCM_HOSTS): the harness's fake GitHub as `github`,
 * the default, and a second fake GitHub as `ghes` (a GitHub Enterprise server beside github.com).
 * Connections are per host; a task's repo_url picks the host its access check, checkout, pull
 * request and merge tracking go to, with that host's token. GitLab and Gitea run one end-to-end
 * suite, once per host (test/e2e/code-hosts.test.ts); this file pins the wiring they share.
 */

let svc: ModelService | undefined;
let ghes: FakeGitHub | undefined;
afterEach(async () => {
  await svc?.close();
  await ghes?.close();
  svc = ghes = undefined;
});

async function twoHosts() {
  ghes = await startFakeGitHub();
  svc = await startModelService({}, 'openai', {
    hosts: [hostEntry('github', ghes, { id: 'ghes' })],
  });
  return { h: svc.h, model: svc.model, ghes };
}

describe('several code hosts in one deployment', { timeout: 150_000 }, () => {
  it('connects per host, lists each in the profile, and names the hosts in its refusals', async () => {
    const { h, ghes } = await twoHosts();
    const owner = await newAccount(h, { plan: 'pro', credits: 3 });
    const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
      h.app.inject({ method, url, headers: owner.auth, payload });

    let me = (await call('GET', '/v1/me')).json();
    expect(me.scm).toBe(owner.scm!.login);
    expect(me.github).toBe(owner.scm!.login);
    expect(me.scm_hosts).toEqual([
      { host: 'github', kind: 'github', web_url: h.github.webUrl, login: owner.scm!.login, oauth: false },
      { host: 'ghes', kind: 'github', web_url: ghes.webUrl, login: null, oauth: false },
    ]);

    // a token of the other host is checked against the host named, and only there
    const there = ghes.addUser('enterprise-me');
    const wrongHost = await call('POST', '/v1/me/scm', { token: there.token });
    expect(wrongHost.statusCode, wrongHost.body).toBe(400);
    expect(wrongHost.json().message).toMatch(/^token: github rejected it/);
    const connected = await call('POST', '/v1/me/scm', { token: there.token, host: 'ghes' });
    expect(connected.statusCode, connected.body).toBe(200);
    expect(connected.json()).toEqual({ scm: 'enterprise-me', host: 'ghes' });
    me = (await call('GET', '/v1/me')).json();
    expect(me.scm).toBe(owner.scm!.login); // the default host's login, as before
    expect(me.scm_hosts.map((x: { login: string }) => x.login)).toEqual([owner.scm!.login, 'enterprise-me']);

    const unknown = await call('POST', '/v1/me/scm', { token: there.token, host: 'gitlab' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toBe('host: "gitlab" is not a code host of this server (it has github, ghes)');
    const badId = await call('DELETE', '/v1/me/scm?host=Not%20an%20id');
    expect(badId.statusCode).toBe(400);
    expect(badId.json().message).toContain('host');

    // a repository on neither host: not_a_scm_url names both
    const elsewhere = await call('POST', '/v1/tasks', {
      prompt: 'Fix the add function',
      repo_url: 'https://example.org/a/b',
    });
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json().error).toBe('not_a_scm_url');
    expect(elsewhere.json().message).toContain(`expected ${h.github.webUrl}/OWNER/NAME or ${ghes.webUrl}/OWNER/NAME`);

    // disconnecting one host leaves the other
    const off = await call('DELETE', '/v1/me/scm?host=ghes');
    expect(off.json()).toEqual({ scm: null, host: 'ghes', disconnected: true });
    me = (await call('GET', '/v1/me')).json();
    expect(me.scm_hosts.map((x: { login: string | null }) => x.login)).toEqual([owner.scm!.login, null]);
    for (const body of [connected.body, me]) expect(JSON.stringify(body)).not.toContain(there.token);
  });

  it('runs a pull-request task on the second host with that host’s connection, and tracks its merge there', async () => {
    const { h, model, ghes } = await twoHosts();
    scriptCalcRun(model, [GOOD_FIX]);
    const owner = await newAccount(h, { plan: 'pro', credits: 3 });
    const repoUrl = `${ghes.webUrl}/corp/calc`;

    // connected to github only: a pr run on ghes needs the ghes connection (412 naming it)
    const refused = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'Fix the add function', repo_url: repoUrl },
    });
    expect(refused.statusCode, refused.body).toBe(412);
    expect(refused.json()).toMatchObject({ error: 'scm_not_connected' });
    expect(refused.json().message).toContain(
      'connect your account on ghes first (POST /v1/me/scm with "host": "ghes")',
    );

    // on the default host, the way to connect needs no host named
    const unconnected = await newAccount(h, { plan: 'pro', credits: 1, scm: false });
    const onDefault = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: unconnected.auth,
      payload: { prompt: 'Fix the add function', repo_url: `${h.github.webUrl}/corp/calc` },
    });
    expect(onDefault.statusCode, onDefault.body).toBe(412);
    expect(onDefault.json().message).toContain('connect your account on github first (POST /v1/me/scm)');

    const there = ghes.addUser(`corp-dev-${randomBytes(3).toString('hex')}`);
    ghes.createRepo('corp', 'calc', { files: CALC_REPO, private: true, collaborators: [there.login] });
    const ok = await h.app.inject({
      method: 'POST',
      url: '/v1/me/scm',
      headers: owner.auth,
      payload: { token: there.token, host: 'ghes' },
    });
    expect(ok.statusCode, ok.body).toBe(200);

    const { task } = await runFixTask(h, owner.auth, repoUrl, 'done');
    // the pull request is on ghes, opened by the ghes user, from a branch pushed there; github saw nothing
    const pulls = ghes.pulls('corp', 'calc');
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.user).toBe(there.login);
    expect(task.pr_url).toBe(`${ghes.webUrl}/corp/calc/pull/${pulls[0]!.number}`);
    expect(ghes.files('corp', 'calc', pulls[0]!.head.ref)['calc/ops.py']).toContain('return a + b');
    expect(h.github.requests.filter((r) => r.path.includes('corp'))).toEqual([]);
    // the private repository was cloned and pushed with the ghes token
    expect(ghes.requests.filter((r) => r.kind === 'git' && r.authenticated).length).toBeGreaterThan(0);

    ghes.mergePull('corp', 'calc', pulls[0]!.number);
    expect(await checkOpenPulls(h.deps)).toMatchObject({ checked: 1, merged: 1, failed: 0 });
    const after = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers: owner.auth })).json();
    expect(after.task).toMatchObject({ pr_merged: true, human_edit_after: false });
    expect(h.logLines.join('\n')).not.toContain(there.token);

    // the task list filters by the whole address: the same OWNER/NAME on github is another repository
    const list = (url: string) =>
      h.app.inject({ method: 'GET', url: `/v1/tasks?repo_url=${encodeURIComponent(url)}`, headers: owner.auth });
    expect((await list(repoUrl)).json().map((t: { id: string }) => t.id)).toEqual([task.id]);
    expect((await list(`${h.github.webUrl}/corp/calc`)).json()).toEqual([]);
  });
});
