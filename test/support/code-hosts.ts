import { afterAll, beforeAll } from 'vitest';
import { type FakeGitea, startFakeGitea } from './fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from './fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from './fake-gitlab/server.js';
import { type ExtraHost, type Harness, startHarness } from './harness.js';

/** The fake of each kind of code host, by the kind's name. */
export interface FakeHosts {
  github: FakeGitHub;
  gitlab: FakeGitLab;
  gitea: FakeGitea;
}
export type FakeHostKind = keyof FakeHosts;

export const START_FAKE: { [K in FakeHostKind]: () => Promise<FakeHosts[K]> } = {
  github: startFakeGitHub,
  gitlab: startFakeGitLab,
  gitea: startFakeGitea,
};

/** A fake host as an entry of the deployment's EMEND_SCM_HOSTS (its id: the kind's name unless given). */
export function hostEntry(
  kind: FakeHostKind,
  fake: { webUrl: string; apiUrl: string },
  opts: { id?: string; oauth?: { clientId: string; clientSecret: string } } = {},
): ExtraHost {
  return {
    id: opts.id ?? kind,
    kind,
    web_url: fake.webUrl,
    api_url: fake.apiUrl,
    ...(opts.oauth ? { oauth: { client_id: opts.oauth.clientId, client_secret: opts.oauth.clientSecret } } : {}),
  };
}

/** The service and a fake host beside its fake GitHub. */
export interface HostedService<K extends FakeHostKind> {
  h: Harness;
  fake: FakeHosts[K];
  close(): Promise<void>;
}

/**
 * The service with a fake host of `kind` as its second host (beside the fake GitHub), with an
 * OAuth app registered on both sides; `close` stops both.
 */
export async function startOAuthHost<K extends FakeHostKind>(
  kind: K,
  oauth: { clientId: string; clientSecret: string },
  opts: { env?: Record<string, string>; scm?: 'fake' } = {},
): Promise<HostedService<K>> {
  const fake = await START_FAKE[kind]();
  fake.addOAuthApp(oauth.clientId, oauth.clientSecret);
  const h = await startHarness(opts.env ?? {}, {
    ...(opts.scm ? { scm: opts.scm } : {}),
    hosts: [hostEntry(kind, fake, { oauth })],
  });
  return {
    h,
    fake: fake as FakeHosts[K],
    async close() {
      await h.close();
      await fake.close();
    },
  };
}

/** The service's public address in OAuth tests (EMEND_BASE_URL): the callback the hosts redirect to is under it. */
export const OAUTH_BASE_URL = 'http://emend.test:8080';

/**
 * startOAuthHost for the enclosing suite (EMEND_BASE_URL = OAUTH_BASE_URL unless `opts.env` says
 * otherwise): started before its tests, closed after them. The object returned is filled in
 * when started: read it inside the tests.
 */
export function useOAuthHost<K extends FakeHostKind>(
  kind: K,
  oauth: { clientId: string; clientSecret: string },
  opts: { env?: Record<string, string>; scm?: 'fake' } = {},
): HostedService<K> {
  const live = {} as HostedService<K>;
  beforeAll(async () => {
    const env = { EMEND_BASE_URL: OAUTH_BASE_URL, ...opts.env };
    Object.assign(live, await startOAuthHost(kind, oauth, { ...opts, env }));
  });
  afterAll(() => live.close?.());
  return live;
}

/** A fake host for the enclosing suite: started before its tests, closed after; read `.fake` inside them. */
export function useFake<T extends { close(): Promise<void> }>(start: () => Promise<T>): { fake: T } {
  const live = {} as { fake: T };
  beforeAll(async () => {
    live.fake = await start();
  });
  afterAll(() => live.fake?.close());
  return live;
}
