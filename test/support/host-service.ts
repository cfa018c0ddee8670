import { randomBytes } from 'node:crypto';
import type { BillingPlanName } from '../../src/config/billing-plans.js';
import { expect } from 'vitest';
import { type Worker, startWorker } from '../../src/engine/worker.js';
import { productionSteps } from '../../src/runtime/step-registry.js';
import { hostEntry } from './code-hosts.js';
import { type FakeGitea, startFakeGitea } from './fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from './fake-gitlab/server.js';
import { type Harness, newAccount, startHarness } from './harness.js';
import { heldPort } from './ports.js';

/*
 * The service beside one fake code host, for the tests of what a host's deliveries start (triggers,
 * CI follow-ups, hooks): the app on a real port (its hooks' URL), a worker that answers trigger jobs
 * and runs maintenance when asked but no task, and an account connected to the host as a new user.
 */

export type FakeHost = FakeGitHub | FakeGitLab | FakeGitea;
export type HostKind = 'github' | 'gitlab' | 'gitea';

/** The three hosts; GitHub is the service's built-in one, the others are configured beside it. */
export const FAKE_HOSTS: { kind: HostKind; start(): Promise<FakeHost>; alone?: true }[] = [
  { kind: 'github', start: () => startFakeGitHub(), alone: true },
  { kind: 'gitlab', start: () => startFakeGitLab() },
  { kind: 'gitea', start: () => startFakeGitea() },
];

export interface HostService {
  fake: FakeHost;
  h: Harness;
  worker: Worker;
  account: Awaited<ReturnType<typeof newAccount>>;
  /** The connected user: their login is the namespace their repositories go in. */
  user: { login: string; token: string };
  close(): Promise<void>;
}

/**
 * A new account connected to the fake host as a new user (POST /v1/me/scm): the user's login is the
 * namespace their repositories go in.
 */
export async function connectedAccount(
  h: Harness,
  fake: FakeHost,
  kind: HostKind,
  opts: { plan?: BillingPlanName; credits?: number } = {},
) {
  const account = await newAccount(h, { plan: opts.plan ?? 'pro', credits: opts.credits ?? 5, scm: false });
  const user = fake.addUser(`o${randomBytes(4).toString('hex')}`);
  const connected = await h.app.inject({
    method: 'POST',
    url: '/v1/me/scm',
    headers: account.auth,
    payload: { token: user.token, host: kind },
  });
  expect(connected.statusCode, connected.body).toBe(200);
  return { account, user };
}

export async function startHostService(host: (typeof FAKE_HOSTS)[number], credits: number): Promise<HostService> {
  const fake = await host.start();
  const held = await heldPort();
  const entry = hostEntry(host.kind, fake);
  const h = await startHarness(
    {
      EMEND_BASE_URL: `http://127.0.0.1:${held.port}`,
      ...(host.alone ? { EMEND_SCM_HOSTS: JSON.stringify([entry]) } : {}),
    },
    { scm: 'fake', ...(host.alone ? {} : { hosts: [entry] }) },
  );
  await held.release();
  await h.app.listen({ port: held.port, host: '127.0.0.1' });
  // Trigger jobs and maintenance (which the tests call) only: no task runs.
  const worker = await startWorker(h.deps, productionSteps(), {
    concurrency: 0,
    heartbeatMs: 60_000,
    staleMs: 60_000,
    maintenanceMs: 600_000,
  });
  const { account, user } = await connectedAccount(h, fake, host.kind, { credits });
  return {
    fake,
    h,
    worker,
    account,
    user,
    close: async () => {
      await worker.stop();
      await h.close();
      await fake.close();
    },
  };
}
