import { randomBytes } from 'node:crypto';
import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents } from '../../src/db/schema.js';
import { connectScm } from '../../src/workspaces/scm-connection.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { CookieJar } from '../support/cookie-jar.js';

/**
 * Connecting a code host through OAuth is bound to the browser and the account that started it
 * (issue 26): browsers are cookie jars talking to the service over a real HTTP port, the code
 * host is the fake GitHub. The attack: someone starts a connection with their own token and
 * sends the authorize link to another person, who approves it at the host.
 */

const BASE_URL = 'http://emend.test:8080';
const CLIENT_ID = 'Iv1.emend-browser-test';
const CLIENT_SECRET = 'oauth-client-secret-browser-0123';

let h: Harness;
let service: string;

beforeAll(async () => {
  h = await startHarness(
    { EMEND_BASE_URL: BASE_URL, EMEND_SCM_OAUTH_CLIENT_ID: CLIENT_ID, EMEND_SCM_OAUTH_CLIENT_SECRET: CLIENT_SECRET },
    { scm: 'fake' },
  );
  h.github.addOAuthApp(CLIENT_ID, CLIENT_SECRET);
  service = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => h.close());

const login = (prefix: string) => `${prefix}-${randomBytes(3).toString('hex')}`;

/** How many codes the service has traded at the host's token endpoint so far. */
const trades = () => h.github.requests.filter((r) => r.path.startsWith('/login/oauth/access_token')).length;

const scmOf = async (auth: Record<string, string>) =>
  ((await (await fetch(`${service}/v1/me`, { headers: auth })).json()) as { scm: string | null }).scm;

/** A browser signed in to the control panel with `token` (POST /v1/auth/session). */
async function signedIn(token: string) {
  const jar = new CookieJar();
  const res = await jar.fetch(`${service}/v1/auth/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  expect(res.status, await res.text()).toBe(200);
  expect(jar.get('emend_session')).toBeTruthy();
  return jar;
}

/** GET /v1/auth/scm/start as the panel does (a same-origin fetch with the session cookie) or as an API client. */
async function start(as: CookieJar | Record<string, string>) {
  const res =
    as instanceof CookieJar
      ? await as.fetch(`${service}/v1/auth/scm/start`)
      : await fetch(`${service}/v1/auth/scm/start`, { headers: as });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()).authorize_url as string;
}

/** The person approves at the host as `user`; the callback address the host sends their browser to. */
async function approve(authorizeUrl: string, user: string) {
  h.github.oauthAs(user);
  const res = await fetch(authorizeUrl, { redirect: 'manual' });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get('location')!);
  expect(`${back.origin}${back.pathname}`).toBe(`${BASE_URL}/v1/auth/scm/callback`);
  return `${service}/v1/auth/scm/callback${back.search}`;
}

/** The workspace's `scm.connected` rows: who, on which host, as which login. */
const connectedRows = async (workspaceId: string) =>
  (
    await h.deps.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, workspaceId), eq(auditEvents.action, 'scm.connected')))
  ).map((r) => ({ actor: r.actorAccountId, targets: r.targets, detail: r.detail }));

const confirmationIn = (html: string) => /aria-label="confirmation code">([A-Z0-9-]+)</.exec(html)?.[1];

const confirm = (auth: Record<string, string>, confirmation: string) =>
  fetch(`${service}/v1/auth/scm/confirm`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ confirmation }),
  });

describe('the attack: a link started by one account, approved in another person’s browser', () => {
  it('is refused before the code is traded when that browser is signed in to another account', async () => {
    const attacker = await newAccount(h, { plan: 'pro', scm: false });
    const victim = await newAccount(h, { plan: 'pro', scm: false });
    const victimBrowser = await signedIn(victim.token);
    const link = await start(attacker.auth);

    const before = trades();
    const res = await victimBrowser.fetch(await approve(link, login('victim')));
    expect(res.status, await res.clone().text()).toBe(403);
    expect((await res.json()).message).toContain('another emend workspace');
    expect(trades()).toBe(before);
    expect(await scmOf(attacker.auth)).toBeNull();
    expect(await scmOf(victim.auth)).toBeNull();
  });

  it('connects nothing in a browser that is not signed in: a confirmation page the attacker cannot read', async () => {
    const attacker = await newAccount(h, { plan: 'pro', scm: false });
    const victimBrowser = new CookieJar();
    // the attacker starts in a browser of their own, which holds the flow's cookie: the victim's does not
    const link = await start(await signedIn(attacker.token));

    const before = trades();
    const res = await victimBrowser.fetch(await approve(link, login('victim')));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const html = await res.text();
    expect(html).toContain('give this code to nobody');
    expect(confirmationIn(html)).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    expect(trades()).toBe(before);
    expect(await scmOf(attacker.auth)).toBeNull();

    // guessing the code: five wrong tries end the waiting connection, so even the right code is then refused
    for (let i = 0; i < 5; i++) {
      const guess = await confirm(attacker.auth, `AAAA-AAA${i + 2}`);
      expect(guess.status).toBe(400);
      expect((await guess.json()).message).toMatch(/^confirmation: /);
    }
    const late = await confirm(attacker.auth, confirmationIn(html)!);
    expect(late.status).toBe(400);
    expect(trades()).toBe(before);
    expect(await scmOf(attacker.auth)).toBeNull();
    expect(await connectedRows(attacker.workspace.id)).toEqual([]);
  });
});

describe('the honest flows', () => {
  it('connects at once in the panel browser that started it; the state is then used up, in any browser', async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const browser = await signedIn(owner.token);
    const user = login('honest');
    const callback = await approve(await start(browser), user);

    const done = await browser.fetch(callback);
    expect(done.status, await done.clone().text()).toBe(200);
    expect(await done.json()).toEqual({ ok: true, scm: user, host: 'github' });
    expect(await scmOf(owner.auth)).toBe(user);
    // recorded with the connection, as the account that started it
    expect(await connectedRows(owner.workspace.id)).toEqual([
      { actor: owner.account.id, targets: { host: 'github' }, detail: { login: user, via: 'oauth' } },
    ]);
    // the flow's cookie is gone from the browser
    expect(browser.get('emend_oauth_connect')).toBeUndefined();

    const before = trades();
    for (const replayIn of [browser, new CookieJar()]) {
      const replay = await replayIn.fetch(callback);
      expect(replay.status).toBe(400);
      expect((await replay.json()).message).toMatch(/^state: already used/);
    }
    expect(trades()).toBe(before);
  });

  it('an API client confirms with the code its person read in the browser; nobody else can', async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const other = await newAccount(h, { plan: 'pro', scm: false });
    const user = login('api');
    const link = await start(owner.auth);
    const page = await new CookieJar().fetch(await approve(link, user));
    const confirmation = confirmationIn(await page.text())!;
    expect(await scmOf(owner.auth)).toBeNull();

    // another account with the very code: refused, and nothing is traded
    const before = trades();
    const stolen = await confirm(other.auth, confirmation);
    expect(stolen.status).toBe(400);
    expect(trades()).toBe(before);

    // typed in lower case with spaces: the same code
    const ok = await confirm(owner.auth, ` ${confirmation.toLowerCase().replace('-', ' ')} `);
    expect(ok.status, await ok.clone().text()).toBe(200);
    expect(await ok.json()).toEqual({ scm: user, host: 'github' });
    expect(await scmOf(owner.auth)).toBe(user);
    expect(await scmOf(other.auth)).toBeNull();
    expect(await connectedRows(owner.workspace.id)).toEqual([
      { actor: owner.account.id, targets: { host: 'github' }, detail: { login: user, via: 'oauth' } },
    ]);
    expect(await connectedRows(other.workspace.id)).toEqual([]);

    const again = await confirm(owner.auth, confirmation);
    expect(again.status).toBe(400);
  });

  it('refuses an expired state, and a confirmation code after ten minutes', async () => {
    const owner = await newAccount(h, { plan: 'pro', scm: false });
    const browser = await signedIn(owner.token);
    const callback = await approve(await start(browser), login('late'));
    h.clock.advance(10 * 60_000 + 1_000);
    const res = await browser.fetch(callback);
    expect(res.status).toBe(400);
    expect((await res.json()).message).toMatch(/^state: expired/);

    const page = await new CookieJar().fetch(await approve(await start(owner.auth), login('late')));
    const confirmation = confirmationIn(await page.text())!;
    h.clock.advance(10 * 60_000 + 1_000);
    const before = trades();
    const stale = await confirm(owner.auth, confirmation);
    expect(stale.status).toBe(400);
    expect(trades()).toBe(before);
    expect(await scmOf(owner.auth)).toBeNull();
  });
});

describe('signing in with the code host', () => {
  it('is refused with a clear page when several accounts are connected to that login, and signs nobody in', async () => {
    const user = login('shared');
    const token = h.github.addUser(user).token;
    for (const _ of [1, 2]) {
      const { account } = await newAccount(h, { plan: 'pro', scm: false });
      await connectScm(h.deps, account.id, token);
    }
    const browser = new CookieJar();
    const go = await browser.fetch(`${service}/v1/auth/scm/login`);
    expect(go.status).toBe(302);
    const res = await browser.fetch(await approve(go.headers.get('location')!, user));
    expect(res.status).toBe(409);
    expect(await res.text()).toContain(`several emend accounts are connected to GitHub user ${user}`);
    expect(browser.get('emend_session')).toBeUndefined();
  });
});
