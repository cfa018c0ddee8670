import type { LookupFunction } from 'node:net';
import { expect } from 'vitest';
import { productionSteps } from '../../src/runtime/step-registry.js';
import { type Worker, startWorker } from '../../src/engine/worker.js';
import { createTask, waitForStatus } from './engine.js';
import { CALC_PROMPT } from './fix-script.js';
import { type ExtraHost, type Harness, startHarness } from './harness.js';
import { type ScriptedModel, startScriptedModel } from './scripted-model/server.js';

export const MANAGED_KEY = 'sk-managed-0123456789';

export type Provider = 'openai' | 'anthropic' | 'google';

export interface ModelService {
  h: Harness;
  model: ScriptedModel;
  worker: Worker;
  close(): Promise<void>;
}

const KEY_VARS: Record<Provider, string> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
  google: 'GOOGLE_GENERATIVE_AI_API_KEY',
};

/**
 * The service with the production steps and one worker, its managed key for `provider`
 * (none when `provider` is null), every provider's base URL on the scripted model, and the
 * fake GitHub as its code host (h.github).
 */
export async function startModelService(
  env: Record<string, string> = {},
  provider: Provider | null = 'openai',
  options: { lookup?: LookupFunction; hosts?: ExtraHost[] } = {},
): Promise<ModelService> {
  const model = await startScriptedModel({ validKeys: [MANAGED_KEY] });
  const h = await startHarness(
    {
      ...(provider ? { [KEY_VARS[provider]]: MANAGED_KEY } : {}),
      OPENAI_BASE_URL: model.urls.openai,
      ANTHROPIC_BASE_URL: model.urls.anthropic,
      GOOGLE_BASE_URL: model.urls.google,
      EMEND_LLM_RETRY_BASE_MS: '10',
      ...env,
    },
    { scm: 'fake', lookup: options.lookup, hosts: options.hosts },
  );
  const worker = await startWorker(h.deps, productionSteps(), {
    concurrency: 1,
    heartbeatMs: 500,
    staleMs: 30_000,
    maintenanceMs: 60_000,
  });
  const svc: ModelService = {
    h,
    model,
    worker,
    // The worker running then: a test may have stopped the first and started another.
    close: async () => {
      await svc.worker.stop();
      await h.close();
      await model.close();
    },
  };
  return svc;
}

export type Log = { step: string; status: string; output: Record<string, unknown>; tokens: number; cost_usd: number };

export async function postFixTask(
  h: Harness,
  auth: Record<string, string>,
  repoUrl: string,
  body: Record<string, unknown> = {},
): Promise<string> {
  return createTask(h, auth, { prompt: CALC_PROMPT, repo_url: repoUrl, ...body });
}

/**
 * Posts a fix task, waits for it to end, and checks it ended as expected; returns the task and its finished log
 * records.
 */
export async function runFixTask(
  h: Harness,
  auth: Record<string, string>,
  repoUrl: string,
  status: 'done' | 'failed',
  body: Record<string, unknown> = {},
) {
  const id = await postFixTask(h, auth, repoUrl, body);
  await waitForStatus(h, id, ['done', 'failed', 'cancelled'], 100_000);
  const got = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json();
  const task = got.task;
  expect(
    task.status,
    JSON.stringify({ error: task.error, logs: got.logs.filter((l: Log) => l.status === 'failed') }),
  ).toBe(status);
  const finished = (got.logs as Log[]).filter((l) => l.status !== 'running');
  return { task, logs: finished, byStep: (step: string) => finished.filter((l) => l.step === step) };
}
