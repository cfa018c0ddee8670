import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoSecrets } from '../../src/db/schema.js';
import { repoSettingsFor, secretContext } from '../../src/repos/repo-settings.js';
import { decryptSecret } from '../../src/secrets/box.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
const REPO = 'https://github.com/acme/widgets';
const SECRET = 'npm_SETTINGSSECRET_0123456789abcdefXYZ';

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

type Auth = Record<string, string>;
const q = (repo: string) => `?repo=${encodeURIComponent(repo)}`;
const settings = (auth: Auth, method: 'GET' | 'PATCH' | 'DELETE', repo: string, payload?: object) =>
  h.app.inject({ method, url: `/v1/me/repos/settings${q(repo)}`, headers: auth, ...(payload ? { payload } : {}) });
const saveSecret = (auth: Auth, repo: string, name: string, value: string) =>
  h.app.inject({ method: 'POST', url: `/v1/me/repos/secrets${q(repo)}`, headers: auth, payload: { name, value } });

describe('per-repository settings', () => {
  it('sets, merges, clears and deletes a repository’s commands and variables; none is a 404', async () => {
    const { auth, account } = await newAccount(h, { plan: 'pro' });
    expect((await settings(auth, 'GET', REPO)).statusCode).toBe(404);
    const set = await settings(auth, 'PATCH', REPO, {
      setup_command: '  make deps ',
      test_command: 'make test',
      env: { NODE_ENV: 'test', FOO: 'bar' },
    });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({
      repo: REPO,
      setup_command: 'make deps',
      test_command: 'make test',
      env: { NODE_ENV: 'test', FOO: 'bar' },
      secrets: [],
    });
    // another spelling of the same repository (case, .git, trailing slash) is the same key
    const merged = await settings(auth, 'PATCH', 'https://github.com/ACME/Widgets.git', {
      test_command: null,
      env: { FOO: null, EXTRA: '1' },
    });
    expect(merged.json()).toMatchObject({ setup_command: 'make deps', test_command: null });
    expect(merged.json().env).toEqual({ NODE_ENV: 'test', EXTRA: '1' });
    const got = await settings(auth, 'GET', `${REPO}/`);
    expect(got.json()).toMatchObject({ setup_command: 'make deps', env: { NODE_ENV: 'test', EXTRA: '1' } });

    const run = await repoSettingsFor(h.deps, account.id, REPO);
    expect(run).toEqual({ setupCommand: 'make deps', env: { NODE_ENV: 'test', EXTRA: '1' }, setupSecrets: {} });

    const list = await h.app.inject({ method: 'GET', url: '/v1/me/repos', headers: auth });
    expect(list.json()).toEqual([{ repo: REPO, secret_count: 0, updated_at: expect.any(String) }]);

    // clearing everything leaves nothing: back to 404
    const cleared = await settings(auth, 'PATCH', REPO, { setup_command: null, env: { NODE_ENV: null, EXTRA: null } });
    expect(cleared.statusCode).toBe(200);
    expect((await settings(auth, 'GET', REPO)).statusCode).toBe(404);
    await settings(auth, 'PATCH', REPO, { test_command: 'npm test' });
    expect((await settings(auth, 'DELETE', REPO)).json()).toEqual({ deleted: true });
    expect((await settings(auth, 'DELETE', REPO)).statusCode).toBe(404);
    expect(await repoSettingsFor(h.deps, account.id, REPO)).toEqual({ env: {}, setupSecrets: {} });
  });

  it('refuses bad input with a 400 naming the field, and other hosts with not_a_scm_url', async () => {
    const { auth } = await newAccount(h, { plan: 'pro' });
    const refusals: Array<[object, string]> = [
      [{ setup_command: '   ' }, 'setup_command: must not be empty'],
      [{ test_command: 'x'.repeat(2001) }, 'test_command:'],
      [{ test_command: 'npm\u0000test' }, 'test_command:'],
      [{ env: { PATH: '/evil' } }, 'env.PATH: PATH is set by the sandbox'],
      [{ env: { Path: '/evil' } }, 'env.Path: Path is set by the sandbox'],
      [{ env: { HOME: '/' } }, 'env.HOME: HOME'],
      [{ env: { https_proxy: 'http://evil' } }, 'env.https_proxy: https_proxy'],
      [{ env: { NO_PROXY: '*' } }, 'env.NO_PROXY: NO_PROXY'],
      [{ env: { npm_config_proxy: 'http://evil' } }, 'env.npm_config_proxy: npm_config_proxy'],
      [{ env: { LD_PRELOAD: '/x.so' } }, 'env.LD_PRELOAD: LD_PRELOAD changes the dynamic loader'],
      [{ env: { LD_LIBRARY_PATH: '/x' } }, 'env.LD_LIBRARY_PATH: LD_LIBRARY_PATH'],
      [{ env: { EMEND_SANDBOX: 'off' } }, 'env.EMEND_SANDBOX: EMEND_SANDBOX is the service'],
      [{ env: { '1BAD': 'x' } }, 'env: "1BAD" is not a variable name'],
      [{ env: { 'A-B': 'x' } }, 'env: "A-B" is not a variable name'],
      [{ env: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`V${i}`, 'x'])) }, 'env:'],
      [{ env: { A: 'x'.repeat(4097) } }, 'env.A:'],
      [{ setup: 'make' }, 'setup'],
    ];
    for (const [body, message] of refusals) {
      const res = await settings(auth, 'PATCH', REPO, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json().error).toBe('bad_request');
      expect(res.json().message, JSON.stringify(body).slice(0, 80)).toContain(message);
    }
    // nothing was stored by any of them
    expect((await settings(auth, 'GET', REPO)).statusCode).toBe(404);

    const elsewhere = await settings(auth, 'GET', 'https://gitlab.example.com/acme/widgets');
    expect(elsewhere.statusCode).toBe(400);
    expect(elsewhere.json()).toMatchObject({ error: 'not_a_scm_url' });
    expect(elsewhere.json().message).toMatch(/^repo: /);
    const notUrl = await settings(auth, 'GET', 'widgets');
    expect(notUrl.statusCode).toBe(400);
    expect(notUrl.json().message).toContain('repo');

    for (const [name, value, message] of [
      ['PATH', 'x', 'name: PATH is set by the sandbox'],
      ['EMEND_TOKEN', 'x', 'name: EMEND_TOKEN'],
      ['has space', 'x', 'name'],
      ['TOKEN', 'x'.repeat(8 * 1024 + 1), 'value'],
      ['TOKEN', 'é'.repeat(4097), 'value: at most 8192 bytes'],
      ['TOKEN', '', 'value'],
    ] as const) {
      const res = await saveSecret(auth, REPO, name, value);
      expect(res.statusCode, name).toBe(400);
      expect(res.json().message).toContain(message);
    }
  });
});

describe('setup-only secrets', () => {
  it('are stored encrypted and bound to account, repository and name; listed by name only', async () => {
    const { auth, account } = await newAccount(h, { plan: 'pro' });
    const saved = await saveSecret(auth, REPO, 'NPM_TOKEN', SECRET);
    expect(saved.statusCode, saved.body).toBe(201);
    expect(Object.keys(saved.json()).sort()).toEqual(['created_at', 'name', 'updated_at']);
    h.clock.advance(1000);
    const replaced = await saveSecret(auth, REPO, 'NPM_TOKEN', `${SECRET}-2`);
    expect(replaced.statusCode).toBe(200);
    expect(replaced.json().updated_at > replaced.json().created_at).toBe(true);
    await saveSecret(auth, REPO, 'OTHER', 'another-secret-value');

    const list = await h.app.inject({ method: 'GET', url: `/v1/me/repos/secrets${q(REPO)}`, headers: auth });
    expect(list.json().map((s: { name: string }) => s.name)).toEqual(['NPM_TOKEN', 'OTHER']);
    const view = await settings(auth, 'GET', REPO);
    for (const body of [saved.body, replaced.body, list.body, view.body]) {
      expect(body).not.toContain(SECRET);
      expect(body).not.toContain(SECRET.slice(-4));
      expect(body).not.toContain('another-secret-value');
    }
    expect(view.json().secrets).toHaveLength(2);

    const rows = await h.deps.db
      .select()
      .from(repoSecrets)
      .where(and(eq(repoSecrets.workspaceId, account.id), eq(repoSecrets.name, 'NPM_TOKEN')));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.valueEnc).not.toContain(SECRET);
    expect(decryptSecret(h.deps.secretKey, rows[0]!.valueEnc, secretContext(account.id, REPO, 'NPM_TOKEN'))).toBe(
      `${SECRET}-2`,
    );
    // the ciphertext opens under no other name, repository or account
    for (const ctx of [
      secretContext(account.id, REPO, 'OTHER'),
      secretContext(account.id, 'https://github.com/acme/other', 'NPM_TOKEN'),
      secretContext('01900000-0000-7000-8000-000000000000', REPO, 'NPM_TOKEN'),
    ])
      expect(() => decryptSecret(h.deps.secretKey, rows[0]!.valueEnc, ctx)).toThrow();
    // moved onto another row, it does not open there either: the run refuses rather than hand it out
    await h.deps.db
      .update(repoSecrets)
      .set({ valueEnc: rows[0]!.valueEnc })
      .where(and(eq(repoSecrets.workspaceId, account.id), eq(repoSecrets.name, 'OTHER')));
    await expect(repoSettingsFor(h.deps, account.id, REPO)).rejects.toThrow();
    await h.app.inject({ method: 'DELETE', url: `/v1/me/repos/secrets/OTHER${q(REPO)}`, headers: auth });

    expect(await repoSettingsFor(h.deps, account.id, 'https://github.com/Acme/Widgets')).toEqual({
      env: {},
      setupSecrets: { NPM_TOKEN: `${SECRET}-2` },
    });
    const gone = await h.app.inject({
      method: 'DELETE',
      url: `/v1/me/repos/secrets/NPM_TOKEN${q(REPO)}`,
      headers: auth,
    });
    expect(gone.json()).toEqual({ deleted: true, name: 'NPM_TOKEN' });
    const again = await h.app.inject({
      method: 'DELETE',
      url: `/v1/me/repos/secrets/NPM_TOKEN${q(REPO)}`,
      headers: auth,
    });
    expect(again.statusCode).toBe(404);
    expect(h.logLines.join('\n')).not.toContain(SECRET);
  });

  it('a repository with nothing is 404 to the list of secrets as to the settings; settings alone list none', async () => {
    const { auth } = await newAccount(h, { plan: 'pro' });
    const secrets = () => h.app.inject({ method: 'GET', url: `/v1/me/repos/secrets${q(REPO)}`, headers: auth });
    for (const res of [await secrets(), await settings(auth, 'GET', REPO)]) {
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json()).toMatchObject({ error: 'not_found', message: `no settings or secrets for ${REPO}` });
    }
    await settings(auth, 'PATCH', REPO, { test_command: 'make test' });
    const none = await secrets();
    expect(none.statusCode, none.body).toBe(200);
    expect(none.json()).toEqual([]);
    await settings(auth, 'DELETE', REPO);
    await saveSecret(auth, REPO, 'NPM_TOKEN', SECRET);
    expect((await secrets()).json().map((s: { name: string }) => s.name)).toEqual(['NPM_TOKEN']);
    await h.app.inject({ method: 'DELETE', url: `/v1/me/repos/secrets/NPM_TOKEN${q(REPO)}`, headers: auth });
    expect((await secrets()).statusCode).toBe(404);
  });

  it('at most 20 per repository', async () => {
    const { auth } = await newAccount(h, { plan: 'pro' });
    for (let i = 0; i < 20; i++) expect((await saveSecret(auth, REPO, `S${i}`, 'v')).statusCode).toBe(201);
    const over = await saveSecret(auth, REPO, 'S20', 'v');
    expect(over.statusCode).toBe(400);
    expect(over.json().message).toBe('name: at most 20 secrets per repository');
    expect((await saveSecret(auth, REPO, 'S3', 'replaced')).statusCode).toBe(200);
  });

  it("another account's repository settings and secrets are 404 to it and stay as they were", async () => {
    const A = await newAccount(h, { plan: 'pro' });
    const B = await newAccount(h, { plan: 'pro' });
    await settings(A.auth, 'PATCH', REPO, { test_command: 'make test', env: { A: '1' } });
    await saveSecret(A.auth, REPO, 'NPM_TOKEN', SECRET);
    expect((await settings(B.auth, 'GET', REPO)).statusCode).toBe(404);
    expect((await settings(B.auth, 'DELETE', REPO)).statusCode).toBe(404);
    const del = await h.app.inject({
      method: 'DELETE',
      url: `/v1/me/repos/secrets/NPM_TOKEN${q(REPO)}`,
      headers: B.auth,
    });
    expect(del.statusCode).toBe(404);
    expect(del.json().error).toBe('not_found');
    const bList = await h.app.inject({ method: 'GET', url: `/v1/me/repos/secrets${q(REPO)}`, headers: B.auth });
    expect(bList.statusCode).toBe(404);
    expect(bList.json()).toMatchObject({ error: 'not_found', message: `no settings or secrets for ${REPO}` });
    expect((await h.app.inject({ method: 'GET', url: '/v1/me/repos', headers: B.auth })).json()).toEqual([]);
    expect(await repoSettingsFor(h.deps, B.account.id, REPO)).toEqual({ env: {}, setupSecrets: {} });
    // B's own settings on the same repository are its own
    await settings(B.auth, 'PATCH', REPO, { test_command: 'b test' });
    expect((await settings(A.auth, 'GET', REPO)).json()).toMatchObject({ test_command: 'make test', env: { A: '1' } });
    expect(await repoSettingsFor(h.deps, A.account.id, REPO)).toEqual({
      testCommand: 'make test',
      env: { A: '1' },
      setupSecrets: { NPM_TOKEN: SECRET },
    });
  });

  it('demo tokens cannot reach them', async () => {
    const demo = await h.app.inject({ method: 'POST', url: '/v1/demo/token', payload: { email: 'd@example.com' } });
    const auth = { authorization: `Bearer ${demo.json().token}` };
    const res = await settings(auth, 'GET', REPO);
    expect(res.statusCode).toBe(403);
  });
});
