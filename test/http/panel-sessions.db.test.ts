import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OIDC_SESSION_TOKEN_NAME, createSession } from '../../src/accounts/sessions.js';
import { createPersonalToken } from '../../src/accounts/token-store.js';
import { cookieFrom } from '../support/cookie-jar.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// A person's control-panel sessions (GET/DELETE /v1/me/sessions), and an owner ending a member's
// sessions and tokens in the workspace at once (POST …/members/{account_id}/sign-out).

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function call(headers: Record<string, string>, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) {
  const res = await h.app.inject({
    method,
    url,
    headers: { origin: h.deps.config.baseUrl, ...headers },
    ...(payload ? { payload } : {}),
  });
  return { status: res.statusCode, body: res.body, json: () => res.json() };
}

/** A browser signed in with `token`, under `userAgent`: its session cookie, and the secret inside it. */
async function signIn(token: string, userAgent: string) {
  const res = await h.app.inject({
    method: 'POST',
    url: '/v1/auth/session',
    headers: { 'user-agent': userAgent },
    payload: { token },
  });
  expect(res.statusCode, res.body).toBe(200);
  const cookie = cookieFrom(res, 'emend_session');
  return { cookie, secret: (cookie.cookie ?? '').split('=')[1]! };
}

describe('a person’s own panel sessions', () => {
  it('lists them newest first, marks the current one, ends one by its id; secrets never shown', async () => {
    const ada = await newAccount(h, { scm: false });
    const laptop = await signIn(ada.token, 'Mozilla/5.0 (X11; Linux x86_64) laptop');
    h.clock.advance(60_000);
    const phone = await signIn(ada.token, `Mozilla/5.0 (Android) phone ${'x'.repeat(400)}`);

    const listed = await call(laptop.cookie, 'GET', '/v1/me/sessions');
    expect(listed.status, listed.body).toBe(200);
    const sessions = listed.json() as Record<string, unknown>[];
    expect(sessions).toHaveLength(2);
    expect(sessions[0]).toMatchObject({ current: false, client_address: '127.0.0.1', workspace_id: ada.workspace.id });
    expect(String(sessions[0]!.user_agent)).toMatch(/^Mozilla\/5\.0 \(Android\) phone x+$/);
    expect(String(sessions[0]!.user_agent)).toHaveLength(300);
    expect(sessions[1]).toMatchObject({ current: true, user_agent: 'Mozilla/5.0 (X11; Linux x86_64) laptop' });
    for (const secret of [laptop.secret, phone.secret, ada.token]) expect(listed.body).not.toContain(secret);
    // with a token there is no current session
    const byToken = (await call(bearer(ada.token), 'GET', '/v1/me/sessions')).json() as { current: boolean }[];
    expect(byToken.map((s) => s.current)).toEqual([false, false]);

    // the laptop ends the phone's session: the phone is signed out, the laptop is not
    const ended = await call(laptop.cookie, 'DELETE', `/v1/me/sessions/${sessions[0]!.id}`);
    expect(ended.status, ended.body).toBe(204);
    expect((await call(phone.cookie, 'GET', '/v1/me')).status).toBe(401);
    expect((await call(laptop.cookie, 'GET', '/v1/me')).status).toBe(200);
    expect((await call(laptop.cookie, 'GET', '/v1/me/sessions')).json()).toHaveLength(1);
    // the token the sessions were opened with is not a code-host sign-in's: it stays
    expect((await call(bearer(ada.token), 'GET', '/v1/me')).status).toBe(200);

    // ended already, another person's, an id that is none, not an id at all
    expect((await call(laptop.cookie, 'DELETE', `/v1/me/sessions/${sessions[0]!.id}`)).status).toBe(404);
    const bo = await newAccount(h, { scm: false });
    await signIn(bo.token, 'bo');
    const bos = (await call(bearer(bo.token), 'GET', '/v1/me/sessions')).json() as { id: string }[];
    const notYours = await call(bearer(ada.token), 'DELETE', `/v1/me/sessions/${bos[0]!.id}`);
    expect(notYours.status).toBe(404);
    expect(notYours.json()).toMatchObject({ error: 'not_found', message: `no session ${bos[0]!.id} of yours` });
    expect((await call(bearer(bo.token), 'GET', '/v1/me/sessions')).json()).toHaveLength(1);
    const bad = await call(bearer(ada.token), 'DELETE', '/v1/me/sessions/not-a-uuid');
    expect(bad.status).toBe(400);

    // an expired session is not listed
    h.clock.advance(13 * 3_600_000);
    expect((await call(bearer(ada.token), 'GET', '/v1/me/sessions')).json()).toEqual([]);
  });
});

describe('an owner signs a member out of the workspace', () => {
  it('ends the member’s sessions and tokens in this workspace only; maintainers may not; a non-member is 404', async () => {
    const owner = await newAccount(h, { scm: false });
    const member = await newAccount(h, { scm: false });
    const maintainer = await newAccount(h, { scm: false });
    const team = (await call(bearer(owner.token), 'POST', '/v1/workspaces', { name: 'team' })).json() as { id: string };
    const mint = async (secret: string, name: string) =>
      (await call(bearer(secret), 'POST', '/v1/me/tokens', { workspace_id: team.id, name })).json() as {
        id: string;
        token: string;
      };
    const ownerIn = await mint(owner.token, 'owner');
    for (const [who, role] of [
      [member, 'member'],
      [maintainer, 'maintainer'],
    ] as const) {
      const invitation = (
        await call(bearer(ownerIn.token), 'POST', `/v1/workspaces/${team.id}/invitations`, { role })
      ).json() as { token: string };
      expect(
        (await call(bearer(who.token), 'POST', '/v1/invitations/accept', { token: invitation.token })).status,
      ).toBe(200);
    }
    const memberIn = await mint(member.token, 'member in team');
    const maintainerIn = await mint(maintainer.token, 'maintainer in team');
    // the member's browser in the team (a token of it), one switched to the team, and one at home
    const inTeam = await signIn(memberIn.token, 'team browser');
    const switched = await signIn(member.token, 'switched browser');
    expect(
      (await call(switched.cookie, 'POST', '/v1/auth/session/workspace', { workspace_id: team.id })).status,
    ).toBeLessThan(300);
    const atHome = await signIn(member.token, 'home browser');
    // a single sign-on's session (its token issued for it alone, in the member's own workspace), switched to the team
    const ssoToken = await createPersonalToken(
      h.deps,
      { accountId: member.account.id, workspaceId: member.workspace.id },
      OIDC_SESSION_TOKEN_NAME,
    );
    const ssoSession = await createSession(h.deps, {
      accountId: member.account.id,
      tokenId: ssoToken.record.id,
      tokenExpiresAt: null,
      sso: { issuer: 'https://login.example', workspaceId: team.id },
    });
    const ssoCookie = { cookie: `emend_session=${ssoSession.secret}` };
    expect((await call(ssoCookie, 'GET', '/v1/me')).status).toBe(200);

    const url = `/v1/workspaces/${team.id}/members/${member.account.id}/sign-out`;
    const refused = await call(bearer(maintainerIn.token), 'POST', url);
    expect(refused.status).toBe(403);
    expect((await call(inTeam.cookie, 'GET', '/v1/me')).status).toBe(200);

    const out = await call(bearer(ownerIn.token), 'POST', url);
    expect(out.status, out.body).toBe(200);
    expect(out.json()).toEqual({ sessions_ended: 3, tokens_revoked: 2 });
    expect((await call(ssoCookie, 'GET', '/v1/me')).status).toBe(401);
    expect((await call(bearer(ssoToken.secret), 'GET', '/v1/me')).status).toBe(401);
    expect((await call(inTeam.cookie, 'GET', '/v1/me')).status).toBe(401);
    expect((await call(switched.cookie, 'GET', '/v1/me')).status).toBe(401);
    expect((await call(bearer(memberIn.token), 'GET', '/v1/me')).status).toBe(401);
    // their own workspace's session and token are theirs: untouched; they are still a member
    expect((await call(atHome.cookie, 'GET', '/v1/me')).status).toBe(200);
    expect((await call(bearer(member.token), 'GET', '/v1/me')).status).toBe(200);
    const members = (await call(bearer(ownerIn.token), 'GET', `/v1/workspaces/${team.id}/members`)).json() as {
      account_id: string;
    }[];
    expect(members.map((m) => m.account_id)).toContain(member.account.id);

    const stranger = await newAccount(h, { scm: false });
    const none = await call(
      bearer(ownerIn.token),
      'POST',
      `/v1/workspaces/${team.id}/members/${stranger.account.id}/sign-out`,
    );
    expect(none.status).toBe(404);
    expect(none.json()).toMatchObject({ error: 'not_found' });
  });
});
