import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiTokens } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

async function lastUsed(accountId: string): Promise<Date | null> {
  const [row] = await h.deps.db
    .select({ at: apiTokens.lastUsedAt })
    .from(apiTokens)
    .where(eq(apiTokens.accountId, accountId));
  return row!.at;
}

// src/accounts/authenticate.ts: a token's last_used_at is written at most once a minute, so a
// burst of authenticated reads costs one write, whether the token came as Bearer or behind a
// control-panel session.
describe('a token’s last use', () => {
  it('is written on first use and then at most once a minute (Bearer)', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    expect(await lastUsed(account.id)).toBeNull();

    const first = h.clock.now();
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).statusCode).toBe(200);
    expect(await lastUsed(account.id)).toEqual(first);

    h.clock.advance(30_000);
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).statusCode).toBe(200);
    expect(await lastUsed(account.id)).toEqual(first);

    h.clock.advance(31_000);
    const later = h.clock.now();
    expect((await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth })).statusCode).toBe(200);
    expect(await lastUsed(account.id)).toEqual(later);
  });

  it('is written when a session acts as the token', async () => {
    const { account, token } = await newAccount(h, { scm: false });
    const signIn = await h.app.inject({
      method: 'POST',
      url: '/v1/auth/session',
      headers: { origin: h.deps.config.baseUrl },
      payload: { token },
    });
    expect(signIn.statusCode).toBe(200);
    const signedInAt = h.clock.now();
    expect(await lastUsed(account.id)).toEqual(signedInAt);

    h.clock.advance(90_000);
    const secret = /emend_session=([^;]+)/.exec(String(signIn.headers['set-cookie']))![1]!;
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: `emend_session=${secret}` } });
    expect(me.statusCode).toBe(200);
    expect(await lastUsed(account.id)).toEqual(h.clock.now());
  });
});
