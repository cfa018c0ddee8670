import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from '../support/cookie-jar.js';
import { type Harness, newAccount } from '../support/harness.js';
import { type TestOidcProvider, serveWithOidc, startOidcProvider } from '../support/oidc-provider.js';

/**
 * Single sign-on through OpenID Connect (issue 48 point 3), over real HTTP against a real
 * provider (oidc-provider) on loopback: the browser is two cookie jars, one for emend and one for
 * the provider, following the redirects between them.
 */
describe('single sign-on with OpenID Connect', () => {
  let h: Harness;
  let base: string;
  let idp: TestOidcProvider;
  let teamIdp: TestOidcProvider;
  let served: Awaited<ReturnType<typeof serveWithOidc>>;

  beforeAll(async () => {
    // A second provider, a team's own: its issuer is a URL a user gave, reached on loopback only
    // because the operator allows it.
    served = await serveWithOidc(() => ({ EMEND_OUTBOUND_ALLOW: '127.0.0.1' }));
    ({ h, idp, base } = served);
    teamIdp = await startOidcProvider({ redirectUri: `${base}/v1/auth/oidc/callback` });
  }, 60_000);

  afterAll(async () => {
    await served?.close();
    await teamIdp?.close();
  });

  /** A browser signing in from `start`: the pages it ends on at emend, and its emend cookies. */
  async function signIn(start: string, opts: { editAuthorizeUrl?: (u: URL) => void; jar?: CookieJar } = {}) {
    const emend = opts.jar ?? new CookieJar();
    const provider = new CookieJar();
    let res = await emend.fetch(`${base}${start}`);
    if (res.status !== 302) return { emend, res, body: await res.text() };
    let location = new URL(res.headers.get('location')!, base);
    opts.editAuthorizeUrl?.(location);
    for (let hop = 0; hop < 10; hop++) {
      const atEmend = location.origin === base;
      res = await (atEmend ? emend : provider).fetch(location);
      if (atEmend || ![302, 303].includes(res.status)) break;
      location = new URL(res.headers.get('location')!, location);
    }
    return { emend, res, body: await res.text() };
  }

  const me = (jar: CookieJar) =>
    fetch(`${base}/v1/me`, { headers: jar.header() }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('signs a person in through the server’s provider: an account by their verified email, a session that works', async () => {
    idp.addUser('alice-sub', { email: 'alice@corp.example', name: 'Alice' });
    idp.as('alice-sub');
    const { emend, res } = await signIn('/v1/auth/oidc/login');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/app/');
    expect(emend.get('emend_session')).toBeDefined();
    expect(emend.get('emend_oidc')).toBeUndefined();
    const who = await me(emend);
    expect(who.status).toBe(200);
    expect(who.body.email).toBe('alice@corp.example');

    // The second time finds the same account by issuer and subject, even with another email.
    idp.addUser('alice-sub', { email: 'alice.renamed@corp.example' });
    const again = await signIn('/v1/auth/oidc/login');
    expect((await me(again.emend)).body.id).toBe(who.body.id);

    const methods = await fetch(`${base}/v1/auth/methods`).then((r) => r.json());
    expect(methods.sso).toBe(true);
  });

  it('signs in an existing account whose email the server’s provider vouches for, and never one it does not vouch for', async () => {
    const existing = await newAccount(h, { email: 'bob@corp.example', scm: false });
    idp.addUser('bob-sub', { email: 'bob@corp.example' });
    idp.as('bob-sub');
    const bob = await signIn('/v1/auth/oidc/login');
    expect((await me(bob.emend)).body.id).toBe(existing.account.id);

    idp.addUser('eve-sub', { email: 'carol@corp.example', email_verified: false });
    idp.as('eve-sub');
    const eve = await signIn('/v1/auth/oidc/login');
    expect(eve.res.status).toBe(403);
    expect(eve.body).toContain('does not vouch for an email address');
    expect(eve.emend.get('emend_session')).toBeUndefined();
  });

  it('refuses an id_token for another audience, from another issuer, with a broken signature or expired', async () => {
    idp.addUser('dan-sub', { email: 'dan@corp.example' });
    idp.as('dan-sub');
    const cases: [Parameters<TestOidcProvider['tamper']>[0], RegExp][] = [
      [(c) => ({ ...c, aud: 'someone-else' }), /aud/],
      [(c) => ({ ...c, iss: 'https://evil.example' }), /iss/],
      ['break-signature', /signature/i],
    ];
    for (const [change, words] of cases) {
      idp.tamper(change);
      const { res, body, emend } = await signIn('/v1/auth/oidc/login');
      expect(res.status, body).toBe(401);
      expect(body).toMatch(words);
      expect(emend.get('emend_session')).toBeUndefined();
    }
    idp.tamper(undefined);

    // emend's clock two hours ahead: the provider's fresh token (an hour's life) has expired for emend.
    h.clock.advance(2 * 3_600_000);
    try {
      const late = await signIn('/v1/auth/oidc/login');
      expect(late.res.status, late.body).toBe(401);
      expect(late.body).toMatch(/exp/);
    } finally {
      h.clock.advance(-2 * 3_600_000);
    }
    expect((await signIn('/v1/auth/oidc/login')).res.status).toBe(302);
  });

  it('refuses a nonce that is not the browser’s, a state from elsewhere, and a callback used twice', async () => {
    idp.addUser('erin-sub', { email: 'erin@corp.example' });
    idp.as('erin-sub');
    // The authorize request's nonce replaced (an id_token minted for another sign-in).
    const replayed = await signIn('/v1/auth/oidc/login', {
      editAuthorizeUrl: (u) => u.searchParams.set('nonce', 'a-nonce-from-another-sign-in'),
    });
    expect(replayed.res.status, replayed.body).toBe(401);
    expect(replayed.body).toMatch(/nonce/);

    // A callback without the browser's cookie (another browser, or a second use).
    const provider = new CookieJar();
    const emend = new CookieJar();
    let res = await emend.fetch(`${base}/v1/auth/oidc/login`);
    let location = new URL(res.headers.get('location')!);
    while (location.origin !== base) {
      res = await provider.fetch(location);
      location = new URL(res.headers.get('location')!, location);
    }
    const first = await emend.fetch(location);
    expect(first.status).toBe(302);
    const second = await emend.fetch(location);
    expect(second.status).toBe(400);
    expect(await second.text()).toContain('another browser or has already been used');
    const elsewhere = await fetch(location, { redirect: 'manual' });
    expect(elsewhere.status).toBe(400);
  });

  it('honours the provider’s rotated signing key, and refuses a person the provider removed', async () => {
    idp.addUser('fay-sub', { email: 'fay@corp.example' });
    idp.as('fay-sub');
    expect((await signIn('/v1/auth/oidc/login')).res.status).toBe(302);
    const before = idp.kid();
    await idp.rotateKey();
    expect(idp.kid()).not.toBe(before);
    const rotated = await signIn('/v1/auth/oidc/login');
    expect(rotated.res.status, rotated.body).toBe(302);

    idp.removeUser('fay-sub');
    const removed = await signIn('/v1/auth/oidc/login');
    expect(removed.res.status).toBe(403);
    expect(removed.body).toContain('access_denied');
    expect(removed.emend.get('emend_session')).toBeUndefined();
  });

  it('a workspace’s own provider: its email domain joins people with the default role; it can require single sign-on', async () => {
    const owner = await newAccount(h, { scm: false });
    const made = await h.app.inject({
      method: 'POST',
      url: '/v1/workspaces',
      headers: owner.auth,
      payload: { name: 'Acme' },
    });
    const team = made.json().id as string;
    const minted = await h.app.inject({
      method: 'POST',
      url: '/v1/me/tokens',
      headers: owner.auth,
      payload: { name: 'acme', workspace_id: team },
    });
    const teamAuth = { authorization: `Bearer ${minted.json().token}` };
    const put = (body: object) =>
      h.app.inject({ method: 'PUT', url: `/v1/workspaces/${team}/sso`, headers: teamAuth, payload: body });
    const setting = {
      issuer: teamIdp.issuer,
      client_id: teamIdp.clientId,
      client_secret: teamIdp.clientSecret,
      email_domains: ['Acme.example'],
      default_role: 'viewer',
    };
    const saved = await put(setting);
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json()).toMatchObject({
      email_domains: ['acme.example'],
      default_role: 'viewer',
      client_secret_set: true,
    });
    expect(saved.body).not.toContain(teamIdp.clientSecret);
    const read = await h.app.inject({ method: 'GET', url: `/v1/workspaces/${team}/sso`, headers: teamAuth });
    expect(read.body).not.toContain(teamIdp.clientSecret);

    // Bad input names the field; a domain another workspace took is a conflict.
    expect((await put({ ...setting, issuer: 'http://idp.example' })).json().message).toMatch(
      /^issuer: must be an https URL/,
    );
    expect((await put({ ...setting, email_domains: ['not a domain'] })).json().message).toMatch(/^email_domains/);
    expect((await put({ ...setting, default_role: 'owner' })).statusCode).toBe(400);
    const other = await newAccount(h, { scm: false });
    const otherTeam = (
      await h.app.inject({ method: 'POST', url: '/v1/workspaces', headers: other.auth, payload: { name: 'B' } })
    ).json().id;
    const otherToken = (
      await h.app.inject({
        method: 'POST',
        url: '/v1/me/tokens',
        headers: other.auth,
        payload: { name: 'b', workspace_id: otherTeam },
      })
    ).json().token;
    const taken = await h.app.inject({
      method: 'PUT',
      url: `/v1/workspaces/${otherTeam}/sso`,
      headers: { authorization: `Bearer ${otherToken}` },
      payload: setting,
    });
    expect(taken.statusCode).toBe(409);
    expect(taken.json().message).toContain('acme.example');

    // A person of the domain signs in through the team's provider (found by their email): a viewer of Acme.
    teamIdp.addUser('gil-sub', { email: 'gil@acme.example' });
    teamIdp.as('gil-sub');
    const gil = await signIn('/v1/auth/oidc/login?email=gil%40acme.example');
    expect(gil.res.status, gil.body).toBe(302);
    const gilMe = await fetch(`${base}/v1/workspaces`, { headers: gil.emend.header() }).then((r) => r.json());
    expect(gilMe.data ?? gilMe).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: team, role: 'viewer' })]),
    );

    // The audit log has the setting (never its secret), the join and the sign-in, through the team's provider.
    const audit = await h.app.inject({
      method: 'GET',
      url: `/v1/workspaces/${team}/audit?limit=50`,
      headers: teamAuth,
    });
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.body).not.toContain(teamIdp.clientSecret);
    const rows = audit.json() as { action: string; actor: { account_id: string }; detail: Record<string, unknown> }[];
    expect(rows.find((r) => r.action === 'sso.set')?.detail).toMatchObject({ email_domains: ['acme.example'] });
    const gilId = rows.find((r) => r.action === 'member.joined')?.actor.account_id;
    expect(gilId).toBeDefined();
    expect(rows.find((r) => r.action === 'session.signed_in' && r.actor.account_id === gilId)?.detail).toEqual({
      via: 'single sign-on',
      issuer: teamIdp.issuer,
    });

    // Someone outside the domain is not taken in; an existing account's email is not taken over.
    teamIdp.addUser('hal-sub', { email: 'hal@elsewhere.example' });
    teamIdp.as('hal-sub');
    expect((await signIn(`/v1/auth/oidc/login?workspace=${team}`)).res.status).toBe(403);
    teamIdp.addUser('mallory-sub', { email: 'bob@corp.example' });
    teamIdp.as('mallory-sub');
    const takeover = await signIn(`/v1/auth/oidc/login?workspace=${team}`);
    expect(takeover.res.status).toBe(409);
    expect(takeover.emend.get('emend_session')).toBeUndefined();

    // Required: the owner's token-made panel session is refused in Acme; the team provider's is not.
    expect((await put({ ...setting, required: true })).statusCode).toBe(200);
    const byToken = await fetch(`${base}/v1/auth/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ token: minted.json().token }),
    });
    expect(byToken.status).toBe(403);
    expect((await byToken.json()).message).toContain('requires single sign-on');
    teamIdp.as('gil-sub');
    const gilAgain = await signIn(`/v1/auth/oidc/login?workspace=${team}`);
    expect((await me(gilAgain.emend)).status).toBe(200);
    // The owner's session from the server's provider cannot switch into Acme: not Acme's issuer.
    idp.addUser('owner-sub', { email: owner.account.email });
    idp.as('owner-sub');
    const ownerSso = await signIn('/v1/auth/oidc/login');
    expect((await me(ownerSso.emend)).status).toBe(200);
    const switched = await fetch(`${base}/v1/auth/session/workspace`, {
      method: 'POST',
      headers: { ...ownerSso.emend.header(), 'content-type': 'application/json', origin: base },
      body: JSON.stringify({ workspace_id: team }),
    });
    expect(switched.status).toBe(403);
    expect((await switched.json()).message).toContain('requires single sign-on');
    expect((await me(ownerSso.emend)).status).toBe(200);
    // The API still takes the team's token (docs/decisions.md).
    expect(
      (await h.app.inject({ method: 'GET', url: `/v1/workspaces/${team}/sso`, headers: teamAuth })).statusCode,
    ).toBe(200);

    expect(
      (await h.app.inject({ method: 'DELETE', url: `/v1/workspaces/${team}/sso`, headers: teamAuth })).statusCode,
    ).toBe(204);
    expect(
      (await h.app.inject({ method: 'GET', url: `/v1/workspaces/${team}/sso`, headers: teamAuth })).statusCode,
    ).toBe(404);
  });

  it('keeps the provider’s client secret out of the logs', () => {
    const logs = h.logLines.join('\n');
    expect(logs).not.toContain(idp.clientSecret);
    expect(logs).not.toContain(teamIdp.clientSecret);
  });
});
