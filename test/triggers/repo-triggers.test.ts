import { createHmac } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasks, triggerDeliveries } from '../../src/db/schema.js';
import { DELIVERIES_PER_MINUTE, DELIVERY_MAX_BYTES } from '../../src/triggers/receive.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

/**
 * Turning triggers on and off (the webhook on the fake GitHub, the secret never shown) and the
 * receiving route's refusals, driven through the app; the deliveries here are signed by the test
 * the way GitHub signs them. test/e2e/triggers.test.ts has the hosts delivering over HTTP.
 */

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ EMEND_BASE_URL: 'https://emend.example' });
});
afterAll(() => h.close());

const put = (auth: Record<string, string>, repo: string, payload: object = {}) =>
  h.app.inject({
    method: 'PUT',
    url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repo)}`,
    headers: auth,
    payload,
  });
const get = (auth: Record<string, string>, repo: string) =>
  h.app.inject({ method: 'GET', url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repo)}`, headers: auth });

/** An account connected to the fake GitHub, owning (admin of) a repository there. */
async function owner(name: string, collaborators: string[] = []) {
  const a = await newAccount(h, { plan: 'pro', credits: 5 });
  h.github.createRepo(a.scm!.login, name, { collaborators });
  return { ...a, repo: `https://github.com/${a.scm!.login}/${name}`, login: a.scm!.login };
}

/** A delivery as GitHub makes one: its event and delivery headers, the HMAC of the body under `secret`. */
function delivery(url: string, secret: string, event: string, payload: object, id: string = crypto.randomUUID()) {
  const body = JSON.stringify(payload);
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  return h.app.inject({
    method: 'POST',
    url: new URL(url).pathname,
    headers: {
      'content-type': 'application/json',
      'x-github-event': event,
      'x-github-delivery': id,
      'x-hub-signature-256': signature,
    },
    payload: body,
  });
}

const commentPayload = (login: string, name: string, body: string, action = 'created', commentId = 42) => ({
  action,
  issue: {
    number: 3,
    title: 'Adding is wrong',
    body: 'add(2, 2) is 0',
    html_url: `https://github.com/${login}/${name}/issues/3`,
  },
  comment: {
    id: commentId,
    body,
    html_url: `https://github.com/${login}/${name}/issues/3#issuecomment-${commentId}`,
    user: { login: 'rita', id: 9 },
  },
  repository: { name, full_name: `${login}/${name}`, owner: { login } },
  sender: { login: 'rita', id: 9 },
});

describe('turning triggers on and off', () => {
  it('registers a webhook with a fresh secret pointing at the receiving route, and never shows the secret', async () => {
    const o = await owner('widgets');
    const res = await put(o.auth, o.repo, { mention: '@fixbot' });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    const [hook] = h.github.hooks(o.login, 'widgets');
    expect(hook).toBeDefined();
    expect(body).toMatchObject({
      repo: o.repo.toLowerCase(),
      host: 'github',
      mention: '@fixbot',
      label: 'emend',
      events: ['comments', 'labels', 'reviews'],
      ci_rounds: 2,
      recent_deliveries: [],
    });
    expect(body.hook_url).toMatch(/^https:\/\/emend\.example\/v1\/hooks\/github\/[0-9a-f-]{36}$/);
    expect(hook!.url).toBe(body.hook_url);
    expect(hook!.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(res.body).not.toContain(hook!.secret);
    expect(h.logLines.join('\n')).not.toContain(hook!.secret);
    expect((await get(o.auth, o.repo)).json()).toMatchObject({ mention: '@fixbot', hook_url: body.hook_url });

    // The hook asks for the checks' events too (CI follow-ups).
    expect(hook!.events).toEqual(expect.arrayContaining(['check_suite', 'check_run', 'status']));
    // Changing the options needs no new hook.
    const changed = await put(o.auth, o.repo, { label: 'autofix', events: ['labels'], ci_rounds: 1 });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ mention: '@fixbot', label: 'autofix', events: ['labels'], ci_rounds: 1 });
    expect(h.github.hooks(o.login, 'widgets')).toHaveLength(1);

    const off = await h.app.inject({
      method: 'DELETE',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(o.repo)}`,
      headers: o.auth,
    });
    expect(off.json()).toEqual({ deleted: true });
    expect(h.github.hooks(o.login, 'widgets')).toEqual([]);
    expect((await get(o.auth, o.repo)).statusCode).toBe(404);
    // A delivery still on its way to the removed hook is refused and logged.
    const late = await delivery(
      body.hook_url,
      hook!.secret,
      'issue_comment',
      commentPayload(o.login, 'widgets', '@fixbot go'),
    );
    expect(late.statusCode).toBe(404);
    expect(h.logLines.join('\n')).toContain('delivery for no enabled repository refused');
  });

  it('refuses bad options, an account without a connection, and a connection that may not manage hooks', async () => {
    const o = await owner('options');
    for (const [payload, field] of [
      [{ mention: 'emend' }, 'mention'],
      [{ label: ' x' }, 'label'],
      [{ events: [] }, 'events'],
      [{ events: ['pushes'] }, 'events'],
      [{ ci_rounds: 3 }, 'ci_rounds'],
      [{ ci_rounds: -1 }, 'ci_rounds'],
      [{ ci_rounds: 1.5 }, 'ci_rounds'],
    ] as const) {
      const res = await put(o.auth, o.repo, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().message).toContain(field);
    }
    const unconnected = await newAccount(h, { plan: 'pro', scm: false });
    expect((await put(unconnected.auth, o.repo)).statusCode).toBe(412);
    const stranger = await newAccount(h, { plan: 'pro' });
    const refused = await put(stranger.auth, o.repo);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toContain('manage the repository');
    expect(h.github.hooks(o.login, 'options')).toEqual([]);
  });

  it('one account per repository: a second is told only when it may push there', async () => {
    const colleague = await newAccount(h, { plan: 'pro' });
    const o = await owner('shared', [colleague.scm!.login]);
    expect((await put(o.auth, o.repo)).statusCode).toBe(201);
    const stranger = await newAccount(h, { plan: 'pro' });
    const refused = await put(stranger.auth, o.repo);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).not.toContain('another account');
    const second = await put(colleague.auth, o.repo);
    expect(second.statusCode).toBe(409);
    expect(second.json().message).toContain('another account');
    expect(h.github.hooks(o.login, 'shared')).toHaveLength(1);
  });

  it('disconnecting the host removes the hooks made with that connection', async () => {
    const o = await owner('gone');
    expect((await put(o.auth, o.repo)).statusCode).toBe(201);
    const res = await h.app.inject({ method: 'DELETE', url: '/v1/me/scm', headers: o.auth });
    expect(res.statusCode, res.body).toBe(200);
    expect(h.github.hooks(o.login, 'gone')).toEqual([]);
    expect((await get(o.auth, o.repo)).statusCode).toBe(404);
  });
});

describe('the receiving route', () => {
  async function enabled(name: string) {
    const o = await owner(name);
    const res = await put(o.auth, o.repo);
    expect(res.statusCode, res.body).toBe(201);
    const [hook] = h.github.hooks(o.login, name);
    return { ...o, url: res.json().hook_url as string, secret: hook!.secret, name };
  }
  const rows = async (id: string) =>
    h.deps.db.select().from(triggerDeliveries).where(eq(triggerDeliveries.triggerId, id));

  it('refuses an unsigned or wrongly signed delivery (401), creating nothing, and makes no call to the host', async () => {
    const t = await enabled('signed');
    const before = h.github.requests.length;
    const payload = commentPayload(t.login, 'signed', '@emend fix');
    for (const secret of ['', 'not-the-secret', `${t.secret}0`]) {
      const res = await delivery(t.url, secret, 'issue_comment', payload);
      expect(res.statusCode).toBe(401);
      expect(res.json().error).toBe('unauthorized');
    }
    const unsigned = await h.app.inject({
      method: 'POST',
      url: new URL(t.url).pathname,
      headers: { 'content-type': 'application/json', 'x-github-event': 'issue_comment', 'x-github-delivery': 'd1' },
      payload: JSON.stringify(payload),
    });
    expect(unsigned.statusCode).toBe(401);
    const id = new URL(t.url).pathname.split('/').pop()!;
    expect(await rows(id)).toEqual([]);
    expect(h.github.requests.length).toBe(before);
  });

  it('404 for an unknown trigger or host; 413 over the size limit; 400 for a body that is not JSON', async () => {
    const t = await enabled('limits');
    const id = new URL(t.url).pathname.split('/').pop()!;
    expect((await delivery(t.url.replace(id, crypto.randomUUID()), t.secret, 'ping', {})).statusCode).toBe(404);
    expect((await delivery(t.url.replace('/github/', '/gitlab/'), t.secret, 'ping', {})).statusCode).toBe(404);
    expect((await delivery(t.url.replace(id, 'not-a-uuid'), t.secret, 'ping', {})).statusCode).toBe(404);
    const big = await delivery(t.url, t.secret, 'issue_comment', { pad: 'x'.repeat(DELIVERY_MAX_BYTES) });
    expect(big.statusCode).toBe(413);
    const notJson = await h.app.inject({
      method: 'POST',
      url: new URL(t.url).pathname,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'issue_comment',
        'x-github-delivery': 'd2',
        'x-hub-signature-256': `sha256=${createHmac('sha256', t.secret).update('{nope').digest('hex')}`,
      },
      payload: '{nope',
    });
    expect(notJson.statusCode).toBe(400);
  });

  it('records a mention and queues it (202); a redelivery creates nothing new; edits and emend’s own comments are ignored', async () => {
    const t = await enabled('records');
    const id = new URL(t.url).pathname.split('/').pop()!;
    const before = h.github.requests.length;
    const payload = commentPayload(t.login, 'records', '@emend please fix the adder');
    const first = await delivery(t.url, t.secret, 'issue_comment', payload, 'delivery-1');
    expect(first.statusCode, first.body).toBe(202);
    expect(first.json()).toEqual({ outcome: 'accepted', delivery: 'delivery-1' });
    // No call to the host before answering.
    expect(h.github.requests.length).toBe(before);
    const again = await delivery(t.url, t.secret, 'issue_comment', payload, 'delivery-1');
    expect(again.json()).toEqual({ outcome: 'duplicate', delivery: 'delivery-1' });
    // The same comment under a new delivery id (Gitea's Redeliver does that) is the same event.
    const redelivered = await delivery(t.url, t.secret, 'issue_comment', payload, 'delivery-1b');
    expect(redelivered.json()).toEqual({ outcome: 'duplicate', delivery: 'delivery-1b' });
    const edited = await delivery(t.url, t.secret, 'issue_comment', { ...payload, action: 'edited' }, 'delivery-2');
    expect(edited.json()).toEqual({
      outcome: 'ignored',
      delivery: 'delivery-2',
      reason: 'a comment edited starts nothing',
    });
    const own = await delivery(
      t.url,
      t.secret,
      'issue_comment',
      commentPayload(t.login, 'records', '<!-- emend -->\n@emend is working on this', 'created', 43),
      'delivery-3',
    );
    expect(own.json()).toMatchObject({ outcome: 'ignored', reason: "emend's own comment" });
    const recorded = await rows(id);
    expect(recorded.map((r) => [r.deliveryId, r.status]).sort()).toEqual([
      ['delivery-1', expect.stringMatching(/^(received|acting|started|answered|failed)$/)],
      ['delivery-2', 'ignored'],
      ['delivery-3', 'ignored'],
    ]);
    const listed = (await get(t.auth, t.repo)).json().recent_deliveries;
    expect(listed.map((d: { delivery_id: string }) => d.delivery_id).sort()).toEqual([
      'delivery-1',
      'delivery-2',
      'delivery-3',
    ]);
    // Nothing ran: no worker in this harness, so no task exists yet.
    expect(await h.deps.db.select().from(tasks).where(eq(tasks.workspaceId, t.account.id))).toEqual([]);
  });

  it(`takes at most ${DELIVERIES_PER_MINUTE} deliveries a minute per repository (429 with Retry-After)`, async () => {
    const t = await enabled('flood');
    const id = new URL(t.url).pathname.split('/').pop()!;
    const now = h.clock.now();
    await h.deps.db.insert(triggerDeliveries).values(
      Array.from({ length: DELIVERIES_PER_MINUTE }, (_, i) => ({
        id: crypto.randomUUID(),
        triggerId: id,
        deliveryId: `old-${i}`,
        event: 'ping',
        status: 'ignored' as const,
        receivedAt: now,
      })),
    );
    const res = await delivery(t.url, t.secret, 'issue_comment', commentPayload(t.login, 'flood', '@emend fix'));
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
  });
});
