import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, tasks, webhookDeliveries } from '../../src/db/schema.js';
import { endTask } from '../../src/tasks/lifecycle/end.js';
import { attemptDelivery, backoffMs } from '../../src/webhooks/attempt.js';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';

// The receiver listens on loopback: the operator allows it, and plain http, as a local deployment would.
const ENV = {
  EMEND_OUTBOUND_ALLOW: '127.0.0.1',
  EMEND_WEBHOOK_ALLOW_HTTP: 'on',
  EMEND_WEBHOOK_TIMEOUT_MS: '400',
  EMEND_WEBHOOK_RETRY_BASE_MS: '1000',
};

let h: Harness;
let rx: WebhookReceiver;
beforeAll(async () => {
  h = await startHarness(ENV);
  rx = await startWebhookReceiver();
});
afterAll(async () => {
  await rx.close();
  await h.close();
});

const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, auth: Record<string, string>, body?: object) =>
  h.app.inject({ method, url, headers: auth, ...(body ? { payload: body } : {}) });

async function endpoint(auth: Record<string, string>, events = ['task.done', 'task.failed']) {
  const res = await call('POST', '/v1/me/webhooks', auth, { url: rx.url, events, description: 'ci' });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string; secret: string };
}

const deliveriesOf = (endpointId: string) =>
  h.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));

describe('webhook endpoints', () => {
  it('are created with a whsec_ secret shown once, listed, changed and deleted; at most 10', async () => {
    const { auth } = await newAccount(h, { scm: false });
    const made = await endpoint(auth);
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const list = await call('GET', '/v1/me/webhooks', auth);
    expect(list.json()).toEqual([expect.objectContaining({ id: made.id, url: rx.url, enabled: true })]);
    expect(list.body).not.toContain(made.secret.slice(6));
    const patched = await call('PATCH', `/v1/me/webhooks/${made.id}`, auth, { events: ['pr.merged'], enabled: false });
    expect(patched.json()).toMatchObject({ events: ['pr.merged'], enabled: false });
    for (let i = 0; i < 9; i++) await endpoint(auth);
    const eleventh = await call('POST', '/v1/me/webhooks', auth, { url: rx.url, events: ['task.done'] });
    expect(eleventh.statusCode).toBe(409);
    expect(eleventh.json().error).toBe('conflict');
    expect((await call('DELETE', `/v1/me/webhooks/${made.id}`, auth)).statusCode).toBe(204);
    expect((await call('DELETE', `/v1/me/webhooks/${made.id}`, auth)).statusCode).toBe(404);
    expect(h.logLines.join('\n')).not.toContain(made.secret.slice(6));
    const exported = await call('GET', '/v1/me/training/export.jsonl', auth);
    expect(exported.statusCode).toBe(200);
    expect(exported.body).not.toContain(made.secret.slice(6));
  });

  it('refuses bad URLs and events with a 400 naming the field', async () => {
    const { auth } = await newAccount(h, { scm: false });
    const bad: [object, RegExp][] = [
      [{ url: 'ftp://example.com/x', events: ['task.done'] }, /url/],
      [{ url: 'https://user:pw@example.com/x', events: ['task.done'] }, /url: credentials/],
      [{ url: 'http://10.1.2.3/x', events: ['task.done'] }, /url.*10\.1\.2\.3/],
      [{ url: rx.url, events: [] }, /events/],
      [{ url: rx.url, events: ['task.exploded'] }, /events/],
    ];
    for (const [body, names] of bad) {
      const res = await call('POST', '/v1/me/webhooks', auth, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().message).toMatch(names);
    }
    const strict = await startHarness({ ...ENV, EMEND_WEBHOOK_ALLOW_HTTP: 'off' });
    try {
      const a = await newAccount(strict, { scm: false });
      const res = await strict.app.inject({
        method: 'POST',
        url: '/v1/me/webhooks',
        headers: a.auth,
        payload: { url: rx.url, events: ['task.done'] },
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toMatch(/url: must be https/);
    } finally {
      await strict.close();
    }
  });
});

describe('deliveries', () => {
  it('sends a signed ping that the reference library verifies, and that a wrong secret does not', async () => {
    const { auth } = await newAccount(h, { scm: false });
    const made = await endpoint(auth);
    const before = rx.received.length;
    const res = await call('POST', `/v1/me/webhooks/${made.id}/test`, auth);
    expect(res.json()).toMatchObject({ event: 'ping', status: 'succeeded', attempts: 1, last_response_code: 200 });
    const got = rx.received[before]!;
    expect(rx.verify(made.secret, got)).toMatchObject({ type: 'ping', data: { endpoint_id: made.id } });
    expect(got.headers['webhook-id']).toBe(res.json().id);
    const other = await endpoint(auth);
    expect(() => rx.verify(other.secret, got)).toThrow();
  });

  it('sends a task event with the task as GET /v1/tasks/{id} shows it, once, to subscribed endpoints only', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    const subscribed = await endpoint(auth, ['task.done']);
    const elsewhere = await endpoint(auth, ['pr.merged']);
    const row = taskRow(account.id, 1, { status: 'running', finishedAt: null, createdAt: h.clock.now() });
    await insertTasks(h.deps.db, [row]);
    await endTask(h.deps, row.id!, { status: 'done' });
    const [delivery] = await deliveriesOf(subscribed.id);
    expect(await deliveriesOf(elsewhere.id)).toEqual([]);
    const before = rx.received.length;
    expect(await attemptDelivery(h.deps, delivery!.id)).toBeUndefined();
    expect(await attemptDelivery(h.deps, delivery!.id)).toBeUndefined(); // done: a second job sends nothing
    expect(rx.received.length).toBe(before + 1);
    const event = rx.verify(subscribed.secret, rx.received[before]!);
    const shown = (await call('GET', `/v1/tasks/${row.id}`, auth)).json().task;
    expect(event).toMatchObject({ type: 'task.done', data: { task: shown } });
    expect(event.id).toBe(delivery!.eventId);
  });

  it('retries 5xx, 429 (after Retry-After) and timeouts with back-off until it is delivered, and not other 4xx', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    const made = await endpoint(auth, ['task.failed', 'task.done']);
    await insertTasks(h.deps.db, [
      taskRow(account.id, 1, { status: 'running', finishedAt: null, createdAt: h.clock.now() }),
      taskRow(account.id, 2, { status: 'running', finishedAt: null, createdAt: h.clock.now() }),
    ]);
    const [one, two] = await h.deps.db.select().from(tasks).where(eq(tasks.workspaceId, account.id));
    rx.script({ status: 503 }, { status: 429, headers: { 'retry-after': '7' } }, { hang: true }, { status: 200 });
    await endTask(h.deps, one!.id, { status: 'failed', error: 'x' });
    const [d] = await deliveriesOf(made.id);
    const start = h.clock.now().getTime();
    const first = await attemptDelivery(h.deps, d!.id);
    const wait1 = first!.next!.getTime() - start;
    expect(wait1).toBeGreaterThanOrEqual(800);
    expect(wait1).toBeLessThanOrEqual(1200);
    expect(await attemptDelivery(h.deps, d!.id)).toBeUndefined(); // not due yet: nothing sent
    h.clock.advance(wait1);
    const second = await attemptDelivery(h.deps, d!.id);
    expect(second!.next!.getTime() - h.clock.now().getTime()).toBe(7_000);
    h.clock.advance(7_000);
    const third = await attemptDelivery(h.deps, d!.id); // the endpoint hangs: the 400 ms timeout
    expect(third?.next).toBeDefined();
    let [row] = await deliveriesOf(made.id);
    expect(row).toMatchObject({ status: 'pending', attempts: 3, lastError: 'no answer within 400 ms' });
    h.clock.advance(third!.next!.getTime() - h.clock.now().getTime());
    expect(await attemptDelivery(h.deps, d!.id)).toBeUndefined();
    [row] = await deliveriesOf(made.id);
    expect(row).toMatchObject({ status: 'succeeded', attempts: 4, lastStatusCode: 200 });
    const ids = rx.received.slice(-4).map((r) => r.headers['webhook-id']);
    expect(new Set(ids)).toEqual(new Set([d!.id])); // one message id on every attempt

    rx.script({ status: 410 });
    await endTask(h.deps, two!.id, { status: 'done' });
    const fourth = (await deliveriesOf(made.id)).find((x) => x.id !== d!.id)!;
    expect(await attemptDelivery(h.deps, fourth.id)).toBeUndefined();
    const listed = (await call('GET', `/v1/me/webhooks/${made.id}/deliveries`, auth)).json();
    expect(listed[0]).toMatchObject({ id: fourth.id, status: 'failed', attempts: 1, last_response_code: 410 });
    const metrics = (await h.app.inject({ method: 'GET', url: '/metrics' })).body;
    for (const outcome of ['success', 'retry', 'failure'])
      expect(metrics).toMatch(new RegExp(`^emend_webhook_attempts_total\\{outcome="${outcome}"\\} [1-9]`, 'm'));
    expect(metrics).toMatch(/^emend_webhook_attempt_duration_seconds_count [1-9]/m);
  });

  it('gives up after the retry window, and disables an endpoint failing for 3 days, saying why', async () => {
    const { account, auth } = await newAccount(h, { scm: false });
    const made = await endpoint(auth, ['task.done']);
    for (let day = 0; day < 4; day++) {
      const row = taskRow(account.id, day, { status: 'running', finishedAt: null, createdAt: h.clock.now() });
      await insertTasks(h.deps.db, [row]);
      await endTask(h.deps, row.id!, { status: 'done' });
      const pending = (await deliveriesOf(made.id)).filter((x) => x.status === 'pending');
      for (const d of pending) {
        rx.script({ status: 500 });
        await attemptDelivery(h.deps, d.id);
      }
      h.clock.advance(25 * 3_600_000);
    }
    // Each delivery was tried again a day later, past its 24 h window: given up, not retried for ever.
    const statuses = (await deliveriesOf(made.id)).sort((a, b) => +a.createdAt - +b.createdAt).map((x) => x.status);
    expect(statuses.slice(0, 3)).toEqual(['failed', 'failed', 'failed']);
    const list = (await call('GET', '/v1/me/webhooks', auth)).json();
    expect(list[0]).toMatchObject({ enabled: false, disabled_reason: expect.stringMatching(/failed for 3 days/) });
    const again = await call('PATCH', `/v1/me/webhooks/${made.id}`, auth, { enabled: true });
    expect(again.json()).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
  });

  it('redelivers a kept payload as a new delivery', async () => {
    const { auth, workspace } = await newAccount(h, { scm: false });
    const made = await endpoint(auth);
    const ping = (await call('POST', `/v1/me/webhooks/${made.id}/test`, auth)).json();
    const res = await call('POST', `/v1/me/webhooks/${made.id}/deliveries/${ping.id}/redeliver`, auth);
    expect(res.statusCode).toBe(202);
    expect(res.json()).toMatchObject({ event: 'ping', status: 'pending', event_id: ping.event_id });
    expect(res.json().id).not.toBe(ping.id);
    // Both recorded, each with the delivery row it made.
    const rows = await h.deps.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, workspace.id));
    expect(rows.filter((r) => r.action.startsWith('webhook.')).map((r) => [r.action, r.targets])).toEqual([
      ['webhook.created', { webhook_id: made.id }],
      ['webhook.tested', { webhook_id: made.id, delivery_id: ping.id }],
      ['webhook.redelivered', { webhook_id: made.id, delivery_id: ping.id, redelivery_id: res.json().id }],
    ]);
  });
});

it('backs off four times longer each time, at most 6 h, with ±20 % jitter', () => {
  expect([1, 2, 3].map((n) => backoffMs(5_000, n, () => 0.5))).toEqual([5_000, 20_000, 80_000]);
  expect(backoffMs(5_000, 20, () => 0.5)).toBe(6 * 3_600_000);
  expect(backoffMs(5_000, 1, () => 0)).toBe(4_000);
  expect(backoffMs(5_000, 1, () => 1)).toBe(6_000);
});
