import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('smoke', () => {
  it('serves health and a profile', async () => {
    const health = await h.app.inject({ method: 'GET', url: '/health' });
    expect(health.statusCode).toBe(200);
    const { auth } = await newAccount(h, { plan: 'pro', credits: 3 });
    const me = await h.app.inject({ method: 'GET', url: '/v1/me', headers: auth });
    expect(me.json()).toMatchObject({ plan: 'pro', credits: 3 });
  });
});
