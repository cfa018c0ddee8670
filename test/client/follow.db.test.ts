import { type EmendClient, type TaskEvent, createClient } from '@emend/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CuttingProxy, startCuttingProxy } from '../support/cutting-proxy.js';
import { CALC_PROMPT, CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, startModelService } from '../support/model-service.js';

// @emend/client against the service on a real port: the production steps on the scripted model,
// the fake GitHub, the real sandbox; a proxy that breaks the stream where a network would.
let svc: ModelService;
let baseUrl: string;
let proxy: CuttingProxy | undefined;

beforeAll(async () => {
  svc = await startModelService();
  baseUrl = await svc.h.app.listen({ host: '127.0.0.1', port: 0 });
});
afterAll(async () => {
  await proxy?.close();
  await svc.close();
});

/** A paid account with the calc repository on the fake GitHub, and the scripted model ready to fix it. */
async function calcRepo(name: string) {
  scriptCalcRun(svc.model);
  const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
  svc.h.github.createRepo('acme', name, { files: CALC_REPO, collaborators: [owner.scm!.login] });
  return { token: owner.token, repoUrl: `${svc.h.github.webUrl}/acme/${name}` };
}

async function collect(client: EmendClient, id: string): Promise<TaskEvent[]> {
  const events: TaskEvent[] = [];
  for await (const event of client.followTask(id)) events.push(event);
  return events;
}

const logsIn = (events: TaskEvent[]) => events.flatMap((e) => (e.type === 'log' ? [e] : []));

/** The stream as one connection would have carried it: connected first, end last, the task's logs once each. */
async function expectWholeStream(client: EmendClient, id: string, events: TaskEvent[]) {
  expect(events[0]).toEqual({ type: 'connected', data: { task_id: id } });
  expect(events.filter((e) => e.type === 'connected')).toHaveLength(1);
  expect(events.at(-1)).toEqual({ type: 'end', data: { status: 'done' } });
  expect(events.filter((e) => e.type === 'end')).toHaveLength(1);
  const { task, logs } = await client.getTask(id);
  expect(task.status).toBe('done');
  const streamed = logsIn(events);
  expect(streamed.map((e) => e.id)).toEqual(logs.map((l) => l.id));
  expect(streamed.map((e) => `${e.data.step}:${e.data.status}`)).toEqual(logs.map((l) => `${l.step}:${l.status}`));
  const states = events.flatMap((e) => (e.type === 'state' ? [e.data] : []));
  expect(states.at(-1)).toMatchObject({ status: 'done', pr_url: task.pr_url });
  // A reconnection's snapshot of an unchanged task is not passed on: each state differs from the one before.
  for (let i = 1; i < states.length; i++) expect(states[i]).not.toEqual(states[i - 1]);
  // Every step ran and finished.
  for (const step of ['planner', 'locator', 'inspector', 'fixer', 'validator', 'pr'])
    expect(
      streamed.filter((e) => e.data.step === step).map((e) => e.data.status),
      step,
    ).toEqual(['running', 'done']);
}

describe('@emend/client: create and follow', { timeout: 150_000 }, () => {
  it('creates a fix task and follows it to done: every log event once, in order, then end', async () => {
    const { token, repoUrl } = await calcRepo('calc-follow');
    const client = createClient({ baseUrl, token });
    const task = await client.createTask({ prompt: CALC_PROMPT, repo_url: repoUrl });
    expect(task).toMatchObject({ status: 'pending', mode: 'pr', task_type: 'fix' });
    await expectWholeStream(client, task.id, await collect(client, task.id));
  });

  it('resumes a stream cut mid-event, twice, with Last-Event-ID: no log lost or repeated', async () => {
    const { token, repoUrl } = await calcRepo('calc-cut');
    proxy = await startCuttingProxy(baseUrl, { streamCuts: [2, 3] });
    const waits: number[] = [];
    const client = createClient({
      baseUrl: proxy.url,
      token,
      sleep: async (ms) => {
        waits.push(ms);
      },
    });
    const task = await client.createTask({ prompt: CALC_PROMPT, repo_url: repoUrl });
    const events = await collect(client, task.id);
    await expectWholeStream(client, task.id, events);
    const ids = logsIn(events).map((e) => String(e.id));
    // Three connections: the first from the start, the others after the 2nd and the 5th log.
    expect(proxy.streams).toEqual([undefined, ids[1], ids[4]]);
    // Each reconnection waited the default retry (1 s): the server sent no `retry:`.
    expect(waits).toEqual([1_000, 1_000]);
  });

  it('starts after a given log id and replays only what follows it', async () => {
    const { token, repoUrl } = await calcRepo('calc-resume');
    const client = createClient({ baseUrl, token });
    const task = await client.createTask({ prompt: CALC_PROMPT, repo_url: repoUrl });
    const all = logsIn(await collect(client, task.id));
    const later: TaskEvent[] = [];
    for await (const event of client.followTask(task.id, { lastEventId: all[3]!.id })) later.push(event);
    expect(logsIn(later).map((e) => e.id)).toEqual(all.slice(4).map((e) => e.id));
    expect(later.at(-1)).toEqual({ type: 'end', data: { status: 'done' } });
  });
});
