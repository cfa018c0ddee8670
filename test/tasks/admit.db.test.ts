import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaces, tasks } from '../../src/db/schema.js';
import { type Harness, forceStatus, newAccount, startHarness } from '../support/harness.js';

// One admission check (src/tasks/lifecycle/admit.ts) for create and continue: these are the
// paths of continue that only the shared check covers.
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
});
afterAll(() => h.close());

async function create(auth: Record<string, string>) {
  return h.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: auth,
    payload: { prompt: 'fix the bug', repo_url: 'https://github.com/psf/requests' },
  });
}

async function donePreview(auth: Record<string, string>) {
  const res = await create(auth);
  expect(res.statusCode, res.body).toBe(201);
  expect(res.json().mode).toBe('preview');
  const id = res.json().id as string;
  await forceStatus(h, eq(tasks.id, id), 'done');
  return id;
}

const continueTask = (auth: Record<string, string>, id: string) =>
  h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/continue`, headers: auth });

const credits = async (accountId: string) =>
  (await h.deps.db.select({ n: workspaces.credits }).from(workspaces).where(eq(workspaces.id, accountId)))[0]!.n;

describe('the one admission check, on continue', () => {
  it('refuses a continue at the plan’s concurrency cap, holding no credit and creating no child', async () => {
    const { auth, account } = await newAccount(h, { plan: 'free', credits: 1 });
    const parent = await donePreview(auth);
    const busy = await create(auth); // free plan: one active task at once
    expect(busy.statusCode, busy.body).toBe(201);
    const refused = await continueTask(auth, parent);
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toBe('CONCURRENT_LIMIT');
    expect(refused.headers['retry-after']).toBe('5');
    expect(await credits(account.id)).toBe(1);
    const children = await h.deps.db.select().from(tasks).where(eq(tasks.parentId, parent));
    expect(children).toEqual([]);
    // the slot frees: the same continue is admitted
    await forceStatus(h, eq(tasks.id, busy.json().id), 'done');
    const admitted = await continueTask(auth, parent);
    expect(admitted.statusCode, admitted.body).toBe(201);
    expect(admitted.json()).toMatchObject({ mode: 'pr', parent_id: parent });
    expect(await credits(account.id)).toBe(0);
  });

  it('does not count a continue against the monthly quota, which the preview already used', async () => {
    const { auth, account } = await newAccount(h, { plan: 'free', credits: 1 });
    const parent = await donePreview(auth);
    for (let i = 1; i < 10; i++) await donePreview(auth); // the free plan's 10 this month
    const eleventh = await create(auth);
    expect(eleventh.statusCode).toBe(402);
    expect(eleventh.json().error).toBe('FREE_LIMIT_REACHED');
    const admitted = await continueTask(auth, parent);
    expect(admitted.statusCode, admitted.body).toBe(201);
    const [child] = await h.deps.db
      .select()
      .from(tasks)
      .where(and(eq(tasks.parentId, parent), eq(tasks.workspaceId, account.id)));
    expect(child).toMatchObject({ mode: 'pr', status: 'pending', creditHeld: true, byok: false });
  });
});
