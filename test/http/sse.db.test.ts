import type { AddressInfo } from 'node:net';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { eq } from 'drizzle-orm';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskLogs, tasks } from '../../src/db/schema.js';
import { CHANNELS } from '../../src/events/bus.js';
import { authPlugin } from '../../src/http/auth.js';
import { installErrorHandling } from '../../src/http/errors.js';
import { type StreamTimings, taskStreamRoutes } from '../../src/http/routes/task-stream.js';
import { namedSchemas } from '../../src/http/components.js';
import { installValidators } from '../../src/http/validation.js';
import { newId } from '../../src/ids.js';
import { STEP_NAMES as PIPELINE, type StepName } from '../../src/step-contract/index.js';
import type { RegistryStep, StepRegistry, StepResult } from '../../src/steps/step.js';
import { createTask, insertJoblessTask } from '../support/engine.js';
import { prOutput, validatorOutput } from '../support/step-outputs.js';
import { appendLog, notifyTask } from '../../src/tasks/task-logs.js';
import { startWorker } from '../../src/engine/worker.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type SseConnection, type SseEvent, type SseItem, mustOpen, openSse } from '../support/sse-client.js';

let h: Harness;
let base: string;
/** Subscriptions to the task-events channel currently held (the streams' wake-ups). */
let liveSubscriptions = 0;

beforeAll(async () => {
  h = await startHarness();
  // the public repositories these tests name, on the code host the service asks
  h.github.createRepo('a', 'b');
  h.github.createRepo('psf', 'requests');
  // Make sure this process LISTENs before any test relies on a NOTIFY arriving.
  await new Promise<void>((resolve) => {
    const off = h.deps.events.subscribe(CHANNELS.taskEvents, (p) => {
      if (p !== 'probe') return;
      clearInterval(timer);
      off();
      resolve();
    });
    const timer = setInterval(() => void h.deps.events.publish(CHANNELS.taskEvents, 'probe'), 50);
  });
  const subscribe = h.deps.events.subscribe.bind(h.deps.events);
  h.deps.events.subscribe = (channel, handler) => {
    const off = subscribe(channel, handler);
    if (channel !== CHANNELS.taskEvents) return off;
    liveSubscriptions++;
    let done = false;
    return () => {
      if (!done) liveSubscriptions--;
      done = true;
      off();
    };
  };
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
});
afterAll(() => h.close());

type Status = 'pending' | 'running' | 'done' | 'failed' | 'cancelled' | 'awaiting_plan';

/** A task row written directly: no queue job, so no worker ever runs it. */
const insertTask = (accountId: string) => insertJoblessTask(h, accountId, { prompt: 'stream me' });

/** A `state` event's data for a task no step has changed yet. */
const NOTHING_YET = { pr_url: null, cost_usd: 0, tokens_total: 0, deployed_url: null, error: null };

/** Moves a task along legal edges (the database refuses others), without any NOTIFY. */
async function moveTo(id: string, ...path: Status[]) {
  for (const status of path) await h.deps.db.update(tasks).set({ status }).where(eq(tasks.id, id));
}

/** Log rows written directly: no NOTIFY, as if it had been lost. */
async function insertLogsQuietly(id: string, n: number, step = 'locator') {
  const rows = Array.from({ length: n }, (_, i) => ({
    taskId: id,
    step,
    status: 'running',
    output: { i },
    createdAt: h.clock.now(),
  }));
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    const inserted = await h.deps.db
      .insert(taskLogs)
      .values(rows.slice(i, i + 500))
      .returning({ id: taskLogs.id });
    ids.push(...inserted.map((r) => r.id));
  }
  return ids;
}

async function logIdsOf(id: string) {
  const rows = await h.deps.db
    .select({ id: taskLogs.id })
    .from(taskLogs)
    .where(eq(taskLogs.taskId, id))
    .orderBy(taskLogs.id);
  return rows.map((r) => r.id);
}

const streamUrl = (id: string, origin = base, prefix = '/v1') => `${origin}${prefix}/tasks/${id}/logs/stream`;
const isEvent = (name: string) => (i: SseItem) => i.kind === 'event' && i.event === name;
const isLog = (step: string, status: string) => (i: SseItem) =>
  i.kind === 'event' && i.event === 'log' && JSON.parse(i.data).step === step && JSON.parse(i.data).status === status;
const logsOf = (s: SseConnection) => s.events().filter((e) => e.event === 'log');
const dataOf = (e: SseItem) => JSON.parse((e as SseEvent).data);

/** The stream route alone on its own real port, with the timings a test needs. */
async function streamApp(timings: Partial<StreamTimings>): Promise<{ app: FastifyInstance; origin: string }> {
  const app = Fastify({ loggerInstance: h.deps.log as FastifyBaseLogger }).withTypeProvider<TypeBoxTypeProvider>();
  installValidators(app);
  installErrorHandling(app);
  for (const schema of namedSchemas) app.addSchema(schema);
  await app.register(authPlugin, { deps: h.deps });
  await app.register(taskStreamRoutes, { deps: h.deps, timings, prefix: '/v1' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, origin: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}` };
}

/**
 * A stream app with these timings, a new account's task (no job: only the test moves it) and that
 * account's stream of it, open; the app is closed after `body`, whatever it threw.
 */
async function onOwnStream(
  timings: Partial<StreamTimings>,
  body: (opened: { id: string; s: SseConnection }) => Promise<void>,
): Promise<void> {
  const { app, origin } = await streamApp(timings);
  try {
    const { account, auth } = await newAccount(h);
    const id = await insertTask(account.id);
    await body({ id, s: mustOpen(await openSse(streamUrl(id, origin), { headers: auth })) });
  } finally {
    await app.close();
  }
}

async function waitUntil(what: string, probe: () => boolean, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const warnings = (from: number) =>
  h.logLines.slice(from).filter((l) => (JSON.parse(l) as { level: number }).level >= 40);

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('GET /v1/tasks/{id}/logs/stream', () => {
  it('follows a live run: connected, a state snapshot, logs in order, state changes, end, then the stream closes', async () => {
    const { auth } = await newAccount(h, { plan: 'pro', credits: 5 });
    const id = await createTask(h, auth, { prompt: 'Fix the crash' });

    // Each step waits until the test lets it go, so every event can be seen arriving live.
    const release = Object.fromEntries(PIPELINE.map((s) => [s, deferred()])) as Record<
      StepName,
      ReturnType<typeof deferred>
    >;
    const result = (step: StepName): StepResult<object> => {
      if (step === 'validator') return { output: validatorOutput(), patch: { passed: true } };
      const url = 'https://github.com/psf/requests/pull/7';
      if (step === 'pr') return { output: prOutput(url), patch: { prUrl: url } };
      if (step === 'planner') return { output: { note: 'planner ran' }, costUsd: 0.25, tokens: 1_200 };
      return { output: { note: `${step} ran` }, costUsd: 0 };
    };
    const steps = Object.fromEntries(
      PIPELINE.map((step): [StepName, RegistryStep] => [
        step,
        async () => {
          await release[step].promise;
          return result(step);
        },
      ]),
    ) as StepRegistry;

    const s = mustOpen(await openSse(streamUrl(id), { headers: auth }));
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(s.headers.get('cache-control')).toBe('no-cache');
    expect(s.headers.get('x-accel-buffering')).toBe('no');
    await s.waitFor(isEvent('state'));
    expect(s.events().map((e) => [e.event, dataOf(e)])).toEqual([
      ['connected', { task_id: id }],
      ['state', { ...NOTHING_YET, status: 'pending' }],
    ]);

    const worker = await startWorker(h.deps, steps, { heartbeatMs: 1_000, maintenanceMs: 60_000 });
    try {
      for (const step of PIPELINE) {
        await s.waitFor(isLog(step, 'running'));
        // The step is still blocked: its result cannot have been streamed yet.
        expect(s.items.some(isLog(step, 'done'))).toBe(false);
        if (step === 'planner') {
          await s.waitFor((i) => isEvent('state')(i) && dataOf(i).status === 'running');
        }
        release[step].resolve();
        await s.waitFor(isLog(step, 'done'));
      }
      await s.waitFor(isEvent('end'));
      await s.closed;
    } finally {
      await worker.stop();
    }

    const events = s.events();
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('connected');
    expect(names[1]).toBe('state');
    expect(names.at(-1)).toBe('end');
    expect(names.filter((n) => n === 'connected' || n === 'end')).toHaveLength(2);
    expect(dataOf(events.at(-1)!)).toEqual({ status: 'done' });

    // Every log row, in order, once; each carries its row id, and nothing else carries an id.
    const logs = logsOf(s);
    expect(logs.map((e) => `${dataOf(e).step}:${dataOf(e).status}`)).toEqual(
      PIPELINE.flatMap((st) => [`${st}:running`, `${st}:done`]),
    );
    expect(logs.map((e) => Number(e.lastEventId))).toEqual(await logIdsOf(id));
    expect(logs.every((e) => e.hasId)).toBe(true);
    expect(events.filter((e) => e.event !== 'log').some((e) => e.hasId)).toBe(false);
    expect(Object.keys(dataOf(logs[1]!)).sort()).toEqual(['created_at', 'output', 'status', 'step']);
    expect(dataOf(logs[1]!)).toMatchObject({ step: 'planner', status: 'done', output: { note: 'planner ran' } });
    expect(new Date(dataOf(logs[1]!).created_at).toISOString()).toBe(dataOf(logs[1]!).created_at);

    // State events: one per change, the statuses in the order they happened, the last one after every log.
    const states = events.filter((e) => e.event === 'state').map(dataOf);
    const statuses = states.map((st) => st.status).filter((st, i, all) => st !== all[i - 1]);
    expect(statuses).toEqual(['pending', 'running', 'done']);
    for (let i = 1; i < states.length; i++) expect(states[i]).not.toEqual(states[i - 1]);
    expect(states.at(-1)).toEqual({
      status: 'done',
      pr_url: 'https://github.com/psf/requests/pull/7',
      cost_usd: 0.25,
      tokens_total: 1_200,
      deployed_url: null,
      error: null,
    });
    expect(names.lastIndexOf('state')).toBe(names.length - 2);
    // The first terminal state comes after every log: a client may stop there.
    const terminalAt = events.findIndex((e) => e.event === 'state' && dataOf(e).status === 'done');
    expect(terminalAt).toBeGreaterThan(names.lastIndexOf('log'));
    const runningAt = events.findIndex((e) => e.event === 'state' && dataOf(e).status === 'running');
    expect(runningAt).toBeLessThan(events.findIndex(isLog('planner', 'done')));
  });

  it('resumes from Last-Event-ID with nothing lost and nothing repeated while logs keep arriving', async () => {
    const { account, auth } = await newAccount(h);
    const id = await insertTask(account.id);
    await moveTo(id, 'running');
    const total = 150;
    const writer = (async () => {
      for (let i = 0; i < total; i++) {
        await appendLog(h.deps, id, { step: 'fixer', status: 'running', output: { i } });
        if (i % 7 === 0) await new Promise((r) => setTimeout(r, 3));
      }
      await moveTo(id, 'done');
      await notifyTask(h.deps, id);
    })();

    const received: number[] = [];
    let last = '';
    let connections = 0;
    for (;;) {
      connections++;
      // Alternate the header (what EventSource sends) and the query parameter.
      const resume = last === '' ? '' : connections % 2 === 0 ? `?last_event_id=${last}` : '';
      const headers = last !== '' && resume === '' ? { ...auth, 'last-event-id': last } : auth;
      const s = mustOpen(await openSse(streamUrl(id) + resume, { headers }));
      const before = received.length;
      // Leave after a few events (or at the end), then come back from where we were.
      await s.until(() => logsOf(s).length >= 13 || s.items.some(isEvent('end')), 10_000).catch(() => undefined);
      s.close();
      await s.closed;
      received.push(...logsOf(s).map((e) => Number(e.lastEventId)));
      if (s.events().some((e) => e.event === 'end')) break;
      last = s.lastEventId() || last;
      expect(received.length).toBeGreaterThan(before);
      expect(connections).toBeLessThan(100);
    }
    await writer;
    expect(connections).toBeGreaterThan(3);
    const all = await logIdsOf(id);
    expect(all).toHaveLength(total);
    expect(received).toEqual(all);
  });

  it('resumes after exactly the id given, by header or query parameter, on both paths; the header wins', async () => {
    const { account, auth } = await newAccount(h);
    const id = await insertTask(account.id);
    const ids = await insertLogsQuietly(id, 6);
    await moveTo(id, 'running', 'done');
    const cases: [string, Record<string, string>, number[]][] = [
      [streamUrl(id), { 'last-event-id': String(ids[2]) }, ids.slice(3)],
      [`${streamUrl(id, base, '')}?last_event_id=${ids[4]}`, {}, ids.slice(5)],
      [`${streamUrl(id)}?last_event_id=${ids[0]}`, { 'last-event-id': String(ids[3]) }, ids.slice(4)],
      [streamUrl(id), { 'last-event-id': String(ids[5]) }, []],
      [streamUrl(id), { 'last-event-id': '0' }, ids],
    ];
    for (const [url, headers, expected] of cases) {
      const s = mustOpen(await openSse(url, { headers: { ...auth, ...headers } }));
      await s.closed;
      expect(logsOf(s).map((e) => Number(e.lastEventId))).toEqual(expected);
      expect(s.events().map((e) => e.event)).toEqual(['connected', ...expected.map(() => 'log'), 'state', 'end']);
    }
  });

  it("replays a finished task's logs, then its state, then end, at once, whatever way it finished", async () => {
    const { account, auth } = await newAccount(h);
    const paths: Record<'done' | 'failed' | 'cancelled', Status[]> = {
      done: ['running', 'done'],
      failed: ['running', 'failed'],
      cancelled: ['running', 'awaiting_plan', 'cancelled'],
    };
    for (const [status, path] of Object.entries(paths)) {
      const id = await insertTask(account.id);
      const ids = await insertLogsQuietly(id, 4);
      await moveTo(id, ...path);
      const started = Date.now();
      const s = mustOpen(await openSse(streamUrl(id), { headers: auth }));
      await s.closed;
      // Well inside one poll interval: the first read saw the end.
      expect(Date.now() - started).toBeLessThan(1_000);
      expect(s.events().map((e) => [e.event, e.hasId ? Number(e.lastEventId) : null])).toEqual([
        ['connected', null],
        ...ids.map((i) => ['log', i]),
        ['state', null],
        ['end', null],
      ]);
      // A client that stops at the terminal state has seen every log.
      expect(dataOf(s.events().at(-2)!)).toEqual({
        status,
        pr_url: null,
        cost_usd: 0,
        tokens_total: 0,
        deployed_url: null,
        error: null,
      });
      expect(dataOf(s.events().at(-1)!)).toEqual({ status });
    }
  });

  it('sends the state only after a backlog longer than one read (1,200 logs), live or finished', async () => {
    const { account, auth } = await newAccount(h);
    for (const path of [['running'], ['running', 'done']] as Status[][]) {
      const id = await insertTask(account.id);
      const ids = await insertLogsQuietly(id, 1_200);
      await moveTo(id, ...path);
      const s = mustOpen(await openSse(streamUrl(id), { headers: auth }));
      await s.waitFor(isEvent('state'), 20_000);
      const names = s.events().map((e) => e.event);
      expect(names.slice(0, 1 + ids.length + 1)).toEqual(['connected', ...ids.map(() => 'log'), 'state']);
      expect(logsOf(s).map((e) => Number(e.lastEventId))).toEqual(ids);
      if (path.at(-1) === 'done') {
        await s.closed;
        expect(
          s
            .events()
            .map((e) => e.event)
            .slice(-2),
        ).toEqual(['state', 'end']);
      } else s.close();
    }
  });

  it(
    "answers 404 for another account's task or an unknown one, and 400 for a malformed id or Last-Event-ID, as " +
      'JSON',
    async () => {
      const owner = await newAccount(h);
      const stranger = await newAccount(h);
      const id = await insertTask(owner.account.id);
      for (const [url, headers, status, code] of [
        [streamUrl(id), stranger.auth, 404, 'not_found'],
        [streamUrl(id, base, ''), stranger.auth, 404, 'not_found'],
        [streamUrl(newId()), owner.auth, 404, 'not_found'],
        [streamUrl('not-a-uuid'), owner.auth, 400, 'bad_request'],
        [streamUrl(id), { ...owner.auth, 'last-event-id': 'abc' }, 400, 'bad_request'],
        [`${streamUrl(id)}?last_event_id=-1`, owner.auth, 400, 'bad_request'],
      ] as const) {
        const answer = await openSse(url, { headers });
        expect(answer.status, url).toBe(status);
        expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
        expect((answer as { body: { error: string } }).body.error).toBe(code);
      }
    },
  );

  it('answers 401 without a token or with a bad one', async () => {
    const { account } = await newAccount(h);
    const id = await insertTask(account.id);
    for (const [headers, code] of [
      [{}, 'unauthorized'],
      [{ authorization: 'Bearer tk_nope' }, 'invalid_token'],
    ] as const) {
      const answer = await openSse(streamUrl(id), { headers });
      expect(answer.status).toBe(401);
      expect((answer as { body: { error: string } }).body.error).toBe(code);
    }
  });

  it('sends a heartbeat comment on an idle stream', async () => {
    await onOwnStream({ heartbeatMs: 40 }, async ({ s }) => {
      await s.waitFor((i) => i.kind === 'comment' && i.text === 'ping');
      const first = s.items.length;
      await s.waitFor((i) => i.kind === 'comment' && i.text === 'ping', 5_000, first);
      // Comments are not events: the client saw only connected and the state snapshot.
      expect(s.events().map((e) => e.event)).toEqual(['connected', 'state']);
      s.close();
    });
  });

  it('sends a state event for every change the panel shows: tokens, the live site, the error', async () => {
    await onOwnStream({ pollMs: 50, heartbeatMs: 60_000 }, async ({ id, s }) => {
      await s.waitFor(isEvent('state'));
      await moveTo(id, 'running');
      await s.waitFor((i) => isEvent('state')(i) && dataOf(i).status === 'running');
      // Tokens alone (no cost: a BYOK run) are a change.
      await h.deps.db.update(tasks).set({ tokensTotal: 3_400 }).where(eq(tasks.id, id));
      await s.waitFor((i) => isEvent('state')(i) && dataOf(i).tokens_total === 3_400);
      await h.deps.db.update(tasks).set({ deployedUrl: 'https://site.example.net/' }).where(eq(tasks.id, id));
      await s.waitFor((i) => isEvent('state')(i) && dataOf(i).deployed_url !== null);
      await h.deps.db
        .update(tasks)
        .set({ status: 'failed', error: 'the sandbox ran out of memory' })
        .where(eq(tasks.id, id));
      await s.waitFor(isEvent('end'));
      await s.closed;
      const states = s
        .events()
        .filter((e) => e.event === 'state')
        .map(dataOf);
      const site = 'https://site.example.net/';
      expect(states).toEqual([
        { ...NOTHING_YET, status: 'pending' },
        { ...NOTHING_YET, status: 'running' },
        { ...NOTHING_YET, status: 'running', tokens_total: 3_400 },
        { ...NOTHING_YET, status: 'running', tokens_total: 3_400, deployed_url: site },
        {
          status: 'failed',
          pr_url: null,
          cost_usd: 0,
          tokens_total: 3_400,
          deployed_url: site,
          error: 'the sandbox ran out of memory',
        },
      ]);
    });
  });

  it('finds new logs and state changes by polling when no NOTIFY arrives', async () => {
    await onOwnStream({ pollMs: 50, heartbeatMs: 60_000 }, async ({ id, s }) => {
      await s.waitFor(isEvent('state'));
      const [logId] = await insertLogsQuietly(id, 1, 'planner');
      const log = (await s.waitFor(isEvent('log'))) as SseEvent;
      expect(Number(log.lastEventId)).toBe(logId);
      await moveTo(id, 'running');
      await s.waitFor((i) => isEvent('state')(i) && dataOf(i).status === 'running');
      await h.deps.db
        .update(tasks)
        .set({ prUrl: 'https://github.com/a/b/pull/1', costUsd: 0.5 })
        .where(eq(tasks.id, id));
      await s.waitFor((i) => isEvent('state')(i) && dataOf(i).pr_url !== null);
      const more = await insertLogsQuietly(id, 2, 'pr');
      await moveTo(id, 'done');
      await s.waitFor(isEvent('end'));
      await s.closed;
      expect(logsOf(s).map((e) => Number(e.lastEventId))).toEqual([logId, ...more]);
      expect(
        s
          .events()
          .filter((e) => e.event === 'state')
          .map(dataOf),
      ).toEqual([
        { ...NOTHING_YET, status: 'pending' },
        { ...NOTHING_YET, status: 'running' },
        { ...NOTHING_YET, status: 'running', pr_url: 'https://github.com/a/b/pull/1', cost_usd: 0.5 },
        { ...NOTHING_YET, status: 'done', pr_url: 'https://github.com/a/b/pull/1', cost_usd: 0.5 },
      ]);
    });
  });

  it('pushes events on NOTIFY without waiting for a poll', async () => {
    await onOwnStream({ pollMs: 600_000, heartbeatMs: 600_000 }, async ({ id, s }) => {
      await s.waitFor(isEvent('state'));
      await moveTo(id, 'running');
      const logId = await appendLog(h.deps, id, { step: 'planner', status: 'running' });
      const log = (await s.waitFor(isEvent('log'), 5_000)) as SseEvent;
      expect(Number(log.lastEventId)).toBe(logId);
      await s.waitFor((i) => isEvent('state')(i) && dataOf(i).status === 'running', 5_000);
      await moveTo(id, 'failed');
      await notifyTask(h.deps, id);
      await s.waitFor(isEvent('end'), 5_000);
      await s.closed;
    });
  });

  it('polls every 1.5 s by default in the app as built', async () => {
    const { account, auth } = await newAccount(h);
    const id = await insertTask(account.id);
    const s = mustOpen(await openSse(streamUrl(id), { headers: auth }));
    await s.waitFor(isEvent('state'));
    const started = Date.now();
    await insertLogsQuietly(id, 1);
    await s.waitFor(isEvent('log'), 5_000);
    expect(Date.now() - started).toBeLessThan(3_000);
    s.close();
  });

  it(
    'streams thousands of rows in order through one stream; a client leaving mid-stream leaves no subscription ' +
      'behind and logs no warning',
    async () => {
      const logStart = h.logLines.length;
      const { account, auth } = await newAccount(h);
      const id = await insertTask(account.id);
      await moveTo(id, 'running');
      // Streams of earlier tests close on the server a moment after their clients leave.
      await waitUntil('earlier streams to let go', () => liveSubscriptions === 0);
      const subscriptionsBefore = 0;

      const s = mustOpen(await openSse(streamUrl(id), { headers: auth }));
      await s.waitFor(isEvent('state'));
      expect(liveSubscriptions).toBe(subscriptionsBefore + 1);
      const ids = await insertLogsQuietly(id, 3_000);
      await notifyTask(h.deps, id);
      await s.until(() => logsOf(s).length === ids.length, 20_000);
      expect(logsOf(s).map((e) => Number(e.lastEventId))).toEqual(ids);

      // A second client leaves while the backlog is being written to it.
      const leaving = mustOpen(await openSse(streamUrl(id), { headers: auth }));
      await leaving.until(() => logsOf(leaving).length >= 100, 20_000);
      leaving.close();
      await leaving.closed;
      await waitUntil('the leaving stream to let go', () => liveSubscriptions === subscriptionsBefore + 1);

      // The first stream still works after all that.
      const later = await appendLog(h.deps, id, { step: 'pr', status: 'running' });
      await s.waitFor((i) => i.kind === 'event' && i.lastEventId === String(later));
      s.close();
      await s.closed;
      await waitUntil('every stream to let go', () => liveSubscriptions === subscriptionsBefore);
      // Nothing is left to wake: a NOTIFY and a poll interval later, still nothing logged.
      await notifyTask(h.deps, id);
      await new Promise((r) => setTimeout(r, 1_700));
      expect(warnings(logStart)).toEqual([]);
    },
  );

  it('ends open streams when the app closes, so closing does not hang', async () => {
    const { app, origin } = await streamApp({});
    const { account, auth } = await newAccount(h);
    const id = await insertTask(account.id);
    await waitUntil('earlier streams to let go', () => liveSubscriptions === 0);
    const streams = await Promise.all(
      [1, 2].map(() => openSse(streamUrl(id, origin), { headers: auth }).then(mustOpen)),
    );
    await Promise.all(streams.map((s) => s.waitFor(isEvent('state'))));
    expect(liveSubscriptions).toBe(2);
    await app.close();
    await Promise.all(streams.map((s) => s.closed));
    // Not `end`: the task goes on; a client reconnects (to another node) and resumes.
    expect(streams.some((s) => s.items.some(isEvent('end')))).toBe(false);
    expect(liveSubscriptions).toBe(0);
  });
});
