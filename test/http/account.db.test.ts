import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret } from '../../src/secrets/box.js';
import { keyContext } from '../../src/workspaces/provider-keys.js';
import { chooseModel } from '../../src/workspaces/model-credentials.js';
import { providerKeys } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type ScriptedModel, startScriptedModel } from '../support/scripted-model/server.js';

let h: Harness;
let model: ScriptedModel;
const OPENAI_KEY = 'sk-proj-abcdefghijklmnopqrstuvwxyz0123';
const ANTHROPIC_KEY = 'sk-ant-api03-zyxwvutsrqponm9876';
const GOOGLE_KEY = 'AIzaSyExampleKeyForTests1234';

beforeAll(async () => {
  model = await startScriptedModel({ validKeys: [OPENAI_KEY, ANTHROPIC_KEY, GOOGLE_KEY] });
  h = await startHarness({
    OPENAI_BASE_URL: model.urls.openai,
    ANTHROPIC_BASE_URL: model.urls.anthropic,
    GOOGLE_BASE_URL: model.urls.google,
    // base_url tests below point at loopback: the double on 127.0.0.1 and a local Ollama (refusals:
    // outbound-keys.db.test.ts)
    EMEND_OUTBOUND_ALLOW: '127.0.0.1, localhost:11434',
  });
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('a', 'b');
});
afterAll(async () => {
  await h.close();
  await model.close();
});

describe('GET /v1/me and POST /v1/me/byok', () => {
  it('carries the code-host login under `scm` and under the host brand key `github`, the same value', async () => {
    const { auth, scm } = await newAccount(h, { plan: 'pro' });
    const me = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json();
    expect(me.scm).toBe(scm!.login);
    expect(me.github).toBe(scm!.login);
    const off = await h.app.inject({ method: 'DELETE', url: '/v1/me/scm', headers: auth });
    expect(off.statusCode, off.body).toBe(200);
    const after = (await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json();
    expect([after.scm, after.github]).toEqual([null, null]);
  });

  it('shows the profile of the spec, and toggles BYOK', async () => {
    const { auth, account } = await newAccount(h, { plan: 'pro', credits: 7, email: 'Ada@Example.com', scm: false });
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth });
    expect(me.statusCode).toBe(200);
    expect(me.json()).toMatchObject({
      id: account.id,
      email: 'ada@example.com',
      plan: 'pro',
      credits: 7,
      use_byok: false,
      scm: null,
      github: null,
      api_keys: [],
    });
    const on = await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: true } });
    expect(on.json()).toEqual({ use_byok: true });
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).json().use_byok).toBe(true);
    const limits = await h.app.inject({ method: 'GET', url: '/v1/tasks/limits', headers: auth });
    expect(limits.json()).toMatchObject({
      plan: 'pro',
      use_byok: true,
      limits: { monthly: 200, concurrent: 3, maxFiles: 20, maxRetries: 2, mode: 'pr' },
    });
    const bad = await h.app.inject({ method: 'POST', url: '/v1/me/byok', headers: auth, payload: { enabled: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('enabled');
  });

  it('sets the account default approval mode, which new tasks inherit', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 2 });
    expect(
      (
        await h.app.inject({
          method: 'POST',
          url: '/v1/me/settings',
          headers: auth,
          payload: { approval_mode: 'manual' },
        })
      ).json(),
    ).toEqual({ approval_mode: 'manual', fixer: null });
    const task = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: auth,
      payload: { prompt: 'fix it', repo_url: 'https://github.com/a/b' },
    });
    expect(task.json().approval_mode).toBe('manual');
  });
});

describe('provider keys', () => {
  it('stores keys encrypted with a fresh nonce, lists metadata only, replaces and deletes', async () => {
    const { auth, account } = await newAccount(h, { plan: 'pro' });
    const saved = await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: auth,
      payload: {
        provider: 'openai',
        api_key: OPENAI_KEY,
        base_url: 'http://localhost:11434/v1/',
        default_model: 'llama3',
      },
    });
    expect(saved.statusCode).toBe(201);
    expect(saved.json()).toMatchObject({
      provider: 'openai',
      last4: '0123',
      base_url: 'http://localhost:11434/v1',
      default_model: 'llama3',
    });
    expect(saved.body).not.toContain(OPENAI_KEY);
    await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: auth,
      payload: { provider: 'anthropic', api_key: ANTHROPIC_KEY },
    });
    const list = await h.app.inject({ method: 'GET', url: '/v1/me/keys', headers: auth });
    expect(list.json().map((k: { provider: string; last4: string }) => [k.provider, k.last4])).toEqual([
      ['anthropic', '9876'],
      ['openai', '0123'],
    ]);
    expect(list.body).not.toContain(OPENAI_KEY);
    expect(list.body).not.toContain(ANTHROPIC_KEY);
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth });
    expect(me.json().api_keys).toHaveLength(2);
    expect(me.body).not.toContain(OPENAI_KEY);

    const rows = await h.deps.db.select().from(providerKeys).where(eq(providerKeys.workspaceId, account.id));
    const openai = rows.find((r) => r.provider === 'openai')!;
    expect(openai.keyEnc).not.toContain(OPENAI_KEY);
    expect(decryptSecret(h.deps.secretKey, openai.keyEnc, keyContext(account.id, 'openai'))).toBe(OPENAI_KEY);
    // bound to its row: the ciphertext does not open under another account's context
    expect(() => decryptSecret(h.deps.secretKey, openai.keyEnc, keyContext(account.id, 'anthropic'))).toThrow();

    // replacing uses a fresh nonce
    await h.app.inject({
      method: 'POST',
      url: '/v1/me/keys',
      headers: auth,
      payload: { provider: 'openai', api_key: OPENAI_KEY },
    });
    const [again] = await h.deps.db.select().from(providerKeys).where(eq(providerKeys.id, openai.id));
    expect(again!.keyEnc).not.toBe(openai.keyEnc);
    expect(again!.baseUrl).toBeNull();

    const del = await h.app.inject({ method: 'DELETE', url: '/v1/me/keys/openai', headers: auth });
    expect(del.json()).toEqual({ deleted: true, provider: 'openai' });
    expect((await h.app.inject({ method: 'DELETE', url: '/v1/me/keys/openai', headers: auth })).statusCode).toBe(404);
    expect((await h.app.inject({ method: 'DELETE', url: '/v1/me/keys/cohere', headers: auth })).statusCode).toBe(400);
  });

  it.each([
    [{ provider: 'cohere', api_key: 'abcdefghijkl' }, 'provider'],
    [{ provider: 'openai' }, 'api_key'],
    [{ provider: 'openai', api_key: 'short' }, 'api_key'],
    [{ provider: 'openai', api_key: 'abcdefghijkl', base_url: 'ftp://x' }, 'base_url'],
    [{ provider: 'openai', api_key: 'abcdefghijkl', base_url: 'not a url' }, 'base_url'],
  ])('rejects a bad key body naming %#', async (body, field) => {
    const { auth } = await newAccount(h, { plan: 'pro' });
    const res = await h.app.inject({ method: 'POST', url: '/v1/me/keys', headers: auth, payload: body });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('bad_request');
    expect(res.json().message).toContain(field);
  });

  it('keeps a key’s context window, bounded, which sizes the BYOK model unless the step’s setting says otherwise', async () => {
    const { auth, account } = await newAccount(h, { plan: 'pro' });
    const save = (context_window: unknown) =>
      h.app.inject({
        method: 'POST',
        url: '/v1/me/keys',
        headers: auth,
        payload: { provider: 'openai', api_key: OPENAI_KEY, base_url: 'http://localhost:11434/v1', context_window },
      });
    for (const wrong of [512, 20_000_000, 8192.5, '32k']) expect((await save(wrong)).statusCode).toBe(400);
    const saved = await save(32_768);
    expect(saved.statusCode).toBe(201);
    expect(saved.json()).toMatchObject({ provider: 'openai', context_window: 32_768 });
    const list = await h.app.inject({ method: 'GET', url: '/v1/me/keys', headers: auth });
    expect(list.json()).toEqual([expect.objectContaining({ context_window: 32_768 })]);

    const task = { workspaceId: account.id, byok: true };
    expect((await chooseModel(h.deps, task, 'fixer')).contextWindow).toEqual({ tokens: 32_768, source: 'key' });
    const llm = { ...h.deps.config.llm, contextWindows: { fixer: 65_536 } };
    const configured = { ...h.deps, config: { ...h.deps.config, llm } };
    expect((await chooseModel(configured, task, 'fixer')).contextWindow).toEqual({
      tokens: 65_536,
      source: 'configuration',
    });
    expect((await chooseModel(configured, task, 'planner')).contextWindow).toEqual({ tokens: 32_768, source: 'key' });
  });

  it('tests keys against each provider’s list-models endpoint, never failing with a 500', async () => {
    const { auth } = await newAccount(h, { plan: 'pro' });
    const test = (payload: object) => h.app.inject({ method: 'POST', url: '/v1/me/keys/test', headers: auth, payload });
    expect((await test({ provider: 'openai', api_key: OPENAI_KEY })).json()).toEqual({ ok: true, models: 3 });
    expect((await test({ provider: 'anthropic', api_key: ANTHROPIC_KEY })).json()).toEqual({ ok: true, models: 2 });
    expect((await test({ provider: 'google', api_key: GOOGLE_KEY })).json()).toEqual({ ok: true, models: 4 });
    const rejected = await test({ provider: 'openai', api_key: 'sk-wrong-key-123456' });
    expect(rejected.statusCode).toBe(200);
    expect(rejected.json()).toEqual({ ok: false, error: expect.stringContaining('rejected the key') });
    // base_url honoured: an OpenAI-compatible server elsewhere
    const viaBase = await test({ provider: 'openai', api_key: OPENAI_KEY, base_url: model.urls.openai });
    expect(viaBase.json()).toEqual({ ok: true, models: 3 });
    const unreachable = await test({ provider: 'openai', api_key: OPENAI_KEY, base_url: 'http://127.0.0.1:9/v1' });
    expect(unreachable.statusCode).toBe(200);
    expect(unreachable.json()).toEqual({ ok: false, error: expect.stringContaining('could not reach') });
    const wrongPath = await test({ provider: 'openai', api_key: OPENAI_KEY, base_url: `${model.urls.openai}/nowhere` });
    expect(wrongPath.json()).toEqual({ ok: false, error: expect.stringContaining('404') });
    // the double saw the keys in the providers' own headers
    const seen = model.requests
      .slice(0, 3)
      .map((r) => [
        r.path.split('?')[0],
        r.headers.authorization ?? r.headers['x-api-key'] ?? r.headers['x-goog-api-key'],
      ]);
    expect(seen).toEqual([
      ['/openai/v1/models', `Bearer ${OPENAI_KEY}`],
      ['/anthropic/v1/models', ANTHROPIC_KEY],
      ['/google/v1beta/models', GOOGLE_KEY],
    ]);
    for (const body of [rejected.body, unreachable.body, wrongPath.body]) expect(body).not.toContain('sk-');
  });
});

describe('personal access tokens', () => {
  it('issues a token shown once, lists without secrets, revokes', async () => {
    const { auth } = await newAccount(h, { plan: 'pro' });
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: auth,
      payload: { name: 'ci', expires_in_days: 90 },
    });
    expect(created.statusCode).toBe(201);
    const { token, id, name, last4, expires_at } = created.json();
    expect(token).toMatch(/^tk_[A-Za-z0-9_-]{40}$/);
    expect(name).toBe('ci');
    expect(last4).toBe(token.slice(-4));
    expect(new Date(expires_at).getTime() - h.clock.now().getTime()).toBe(90 * 86_400_000);
    const newAuth = { authorization: `Bearer ${token}` };
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: newAuth })).statusCode).toBe(200);

    const list = await h.app.inject({ method: 'GET', url: '/v1/me/tokens', headers: auth });
    expect(list.json()).toHaveLength(2);
    expect(list.body).not.toContain(token);
    expect(list.json().find((t: { id: string }) => t.id === id)).toMatchObject({
      name: 'ci',
      kind: 'full',
      revoked_at: null,
    });

    const revoked = await h.app.inject({ method: 'DELETE', url: `/v1/me/tokens/${id}`, headers: auth });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).not.toBeNull();
    expect(revoked.body).not.toContain(token);
    const after = await h.app.inject({ method: 'GET', url: '/v1/me', headers: newAuth });
    expect(after.statusCode).toBe(401);
    expect(after.json().error).toBe('invalid_token');

    const noBody = await h.app.inject({ method: 'POST', url: '/v1/me/tokens', headers: auth });
    expect(noBody.statusCode).toBe(201);
    expect(noBody.json().expires_at).toBeNull();
    const bad = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: auth,
      payload: { expires_in_days: 0 },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain('expires_in_days');
  });

  it('will not revoke another account’s token', async () => {
    const a = await newAccount(h, { plan: 'pro' });
    const b = await newAccount(h, { plan: 'pro' });
    const [bToken] = (await h.app.inject({ method: 'GET', url: '/v1/me/tokens', headers: b.auth })).json();
    const res = await h.app.inject({ method: 'DELETE', url: `/v1/me/tokens/${bToken.id}`, headers: a.auth });
    expect(res.statusCode).toBe(404);
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: b.auth })).statusCode).toBe(200);
  });
});
