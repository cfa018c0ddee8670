import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhookDeliveries } from '../../src/db/schema.js';
import { endTask } from '../../src/tasks/lifecycle/end.js';
import { insertTasks, taskRow } from '../feedback/seed.js';
import { waitFor } from '../support/engine.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';
import { workerProcesses } from '../support/worker-processes.js';

/**
 * Deliveries through the real queue, made by real worker processes (the production worker loop,
 * its pg-boss consumers and maintenance), one of them SIGKILLed in the middle of an attempt.
 */
const ENV = {
  EMEND_OUTBOUND_ALLOW: '127.0.0.1',
  EMEND_WEBHOOK_ALLOW_HTTP: 'on',
  EMEND_WEBHOOK_TIMEOUT_MS: '500',
  EMEND_WEBHOOK_RETRY_BASE_MS: '300',
};

let h: Harness;
let rx: WebhookReceiver;
let workers: Awaited<ReturnType<typeof workerProcesses>>;
beforeAll(async () => {
  h = await startHarness(ENV);
  rx = await startWebhookReceiver();
  workers = await workerProcesses(h);
});
afterAll(async () => {
  await workers.close();
  await rx.close();
  await h.close();
});

const workerEnv = () => ({ ...ENV, EMEND_SECRET_KEY: h.deps.secretKey.toString('hex') });

async function taskEnds(auth: Record<string, string>, accountId: string) {
  const made = await h.app.inject({
    method: 'POST',
    url: '/v1/me/webhooks',
    headers: auth,
    payload: { url: rx.url, events: ['task.done'] },
  });
  const { id: endpointId, secret } = made.json() as { id: string; secret: string };
  const row = taskRow(accountId, 1, { status: 'running', finishedAt: null, createdAt: h.clock.now() });
  await insertTasks(h.deps.db, [row]);
  await endTask(h.deps, row.id!, { status: 'done' });
  const [delivery] = await h.deps.db
    .select()
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.endpointId, endpointId));
  return { delivery: delivery!, secret, taskId: row.id! };
}

const statusOf = async (id: string) =>
  (await h.deps.db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)))[0]!;

describe('webhook delivery by worker processes', () => {
  it('retries a receiver that is down, and delivers once it is up', async () => {
    const worker = await workers.start(workerEnv());
    const { account, auth } = await newAccount(h, { scm: false });
    rx.script({ status: 503 }, { status: 502 });
    const before = rx.received.length;
    const { delivery, secret, taskId } = await taskEnds(auth, account.id);
    const done = await waitFor(
      'delivered',
      async () => {
        const d = await statusOf(delivery.id);
        return d.status === 'succeeded' ? d : undefined;
      },
      30_000,
    );
    expect(done.attempts).toBe(3);
    const got = rx.received.slice(before);
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([delivery.id, delivery.id, delivery.id]);
    expect(rx.verify(secret, got[2]!)).toMatchObject({ type: 'task.done', data: { task: { id: taskId } } });
    await workers.kill(worker);
  });

  it('delivers an attempt whose worker was SIGKILLed mid-request, through another worker', async () => {
    const first = await workers.start(workerEnv());
    const { account, auth } = await newAccount(h, { scm: false });
    rx.script({ hang: true });
    const before = rx.received.length;
    const { delivery, secret } = await taskEnds(auth, account.id);
    await waitFor('the first attempt reaching the receiver', async () => rx.received.length > before, 30_000);
    await workers.kill(first, 'SIGKILL');
    expect((await statusOf(delivery.id)).status).toBe('pending');
    await workers.start(workerEnv());
    const done = await waitFor(
      'delivered by the second worker',
      async () => {
        const d = await statusOf(delivery.id);
        return d.status === 'succeeded' ? d : undefined;
      },
      30_000,
    );
    expect(done.attempts).toBe(2);
    const got = rx.received.slice(before);
    expect(got.map((r) => r.headers['webhook-id'])).toEqual([delivery.id, delivery.id]);
    expect(rx.verify(secret, got[1]!).type).toBe('task.done');
  });
});
