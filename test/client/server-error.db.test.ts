import { EmendError, ServerError, createClient } from '@emend/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// The 5xx family from the real service: its code host is an address where nothing listens, so
// connecting an account answers 502 scm_unavailable (a POST without a key: never retried).
let h: Harness;
let baseUrl: string;

beforeAll(async () => {
  h = await startHarness({ EMEND_SCM_API_URL: `http://127.0.0.1:${await freePort()}` });
  baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(() => h.close());

describe('@emend/client and a server-side failure', () => {
  it('throws ServerError with the code, message and request id of a 502', async () => {
    const { token } = await newAccount(h, { scm: false });
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls++;
      return fetch(input, init);
    };
    const client = createClient({ baseUrl, token, fetch: counting });
    const err = await client
      .POST('/v1/me/scm', { body: { token: 'ghp_0123456789abcdefghij' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toBeInstanceOf(EmendError);
    expect(err).toMatchObject({ status: 502, code: 'scm_unavailable', requestId: expect.any(String) });
    expect((err as Error).message).toMatch(/code host could not be reached/);
    expect(calls).toBe(1);
  });
});
