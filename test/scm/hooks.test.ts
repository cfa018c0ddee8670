import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookEvent, type HostKind, ScmError } from '../../src/scm/code-host.js';
import { giteaKind } from '../../src/scm/gitea/gitea.js';
import { gitHubKind } from '../../src/scm/github/github.js';
import { gitLabKind } from '../../src/scm/gitlab/gitlab.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';

/**
 * Webhooks on each code host, over real HTTP: the adapter registers one on the double with a
 * maintainer's token (a writer or a reader is refused as the host refuses them), changes its events
 * and removes it;
 * the double delivers events to a local receiver as the host does, and the host kind's
 * verification accepts them with the hook's secret and nothing else. One suite, run once per host.
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;

interface HostCase {
  name: string;
  start(): Promise<Fake>;
  kind: HostKind;
  /** The createRepo option naming who may only read. */
  readers: 'reporters' | 'readers';
  /** The status a writer or a reader without admin rights gets on the hooks. */
  refused: number;
  /** The REST path of the repository's hooks (the host's own list). */
  hooksPath: string;
  /** The hook's events in the host's words when asked for all of emend's. */
  stored: string[];
  /** The event header's value for each of emend's events. */
  words: Record<HookEvent, string>;
  /** The headers that carry the proof (signature or token). */
  proof: string[];
  /** Whether the proof covers the body (GitLab sends the secret itself: it does not). */
  signsBody: boolean;
  /** Headers the host also sends under another brand (Forgejo beside Gitea's): the delivery verifies without the first. */
  alsoAs?: [string, string];
}

const ALL: HookEvent[] = ['issue_comment', 'issues', 'pull_request_review', 'pull_request_review_comment', 'ci'];

const giteaCase = (name: string, start: () => Promise<Fake>, alsoAs?: [string, string]): HostCase => ({
  name,
  start,
  kind: giteaKind,
  readers: 'readers',
  refused: 403,
  hooksPath: '/repos/olga/widget/hooks',
  stored: [
    'issue_comment',
    'issues',
    'pull_request_comment',
    'pull_request_review',
    'status',
    'workflow_job',
    'workflow_run',
  ],
  words: {
    issue_comment: 'issue_comment',
    issues: 'issues',
    pull_request_review: 'pull_request_rejected',
    pull_request_review_comment: 'pull_request_comment',
    ci: 'status',
  },
  proof: ['x-gitea-signature', 'x-forgejo-signature'],
  signsBody: true,
  ...(alsoAs ? { alsoAs } : {}),
});

const HOSTS: HostCase[] = [
  {
    name: 'GitHub',
    start: () => startFakeGitHub(),
    kind: gitHubKind,
    readers: 'readers',
    refused: 404,
    hooksPath: '/repos/olga/widget/hooks',
    stored: [
      'check_run',
      'check_suite',
      'issue_comment',
      'issues',
      'pull_request_review',
      'pull_request_review_comment',
      'status',
    ],
    words: { ...(Object.fromEntries(ALL.map((e) => [e, e])) as Record<HookEvent, string>), ci: 'check_suite' },
    proof: ['x-hub-signature-256'],
    signsBody: true,
  },
  {
    name: 'GitLab',
    start: () => startFakeGitLab(),
    kind: gitLabKind,
    readers: 'reporters',
    refused: 403,
    hooksPath: '/projects/olga%2Fwidget/hooks',
    stored: ['issues_events', 'merge_requests_events', 'note_events', 'pipeline_events'],
    words: {
      issue_comment: 'Note Hook',
      issues: 'Issue Hook',
      pull_request_review: 'Merge Request Hook',
      pull_request_review_comment: 'Note Hook',
      ci: 'Pipeline Hook',
    },
    proof: ['x-gitlab-token'],
    signsBody: false,
  },
  giteaCase('Gitea', () => startFakeGitea()),
  giteaCase('Forgejo', () => startFakeGitea({ flavour: 'forgejo' }), ['x-gitea-', 'x-forgejo-']),
];

type Received = { headers: IncomingHttpHeaders; body: Buffer };

/** A receiver on 127.0.0.1 that keeps every request and answers 202. */
async function startReceiver() {
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    received.push({ headers: req.headers, body: Buffer.concat(await req.toArray()) });
    res.writeHead(202, { 'content-type': 'text/plain' }).end('queued');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/in`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const without = (headers: IncomingHttpHeaders, names: string[]) =>
  Object.fromEntries(Object.entries(headers).filter(([k]) => !names.includes(k)));

describe.each(HOSTS)('webhooks on $name', (c) => {
  const SECRET = 'whsec-7f3a9c1e5b2d4f6a8c0e';
  let fake: Fake;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let olga: string;
  let dev: string;
  let rita: string;
  let hookId: string;
  const host = (token: string) => c.kind.client({ apiUrl: fake.apiUrl, fetch, token });

  beforeAll(async () => {
    [fake, receiver] = await Promise.all([c.start(), startReceiver()]);
    [olga, dev, rita] = ['olga', 'dev', 'rita'].map((login) => fake.addUser(login).token) as [string, string, string];
    fake.createRepo('olga', 'widget', { collaborators: ['dev'], [c.readers]: ['rita'] });
  });
  afterAll(async () => {
    await receiver?.close();
    await fake?.close();
  });

  it('registers a hook with the owner’s token: the URL, the secret and the host’s events, the secret never shown', async () => {
    ({ id: hookId } = await host(olga).createHook('olga', 'widget', {
      url: receiver.url,
      secret: SECRET,
      events: ALL,
    }));
    const [stored, ...more] = fake.hooks('olga', 'widget');
    expect(more).toEqual([]);
    expect({ id: String(stored?.id), url: stored?.url, secret: stored?.secret, active: stored?.active }).toEqual({
      id: hookId,
      url: receiver.url,
      secret: SECRET,
      active: true,
    });
    expect([...(stored?.events ?? [])].sort()).toEqual(c.stored);
    const listed = await fetch(`${fake.apiUrl}${c.hooksPath}`, { headers: { authorization: `Bearer ${olga}` } });
    const text = await listed.text();
    expect(listed.status).toBe(200);
    expect(text).toContain(receiver.url);
    expect(text).not.toContain(SECRET);
  });

  it('refuses one who may push but not administer, and a reader, with the host’s status', async () => {
    for (const token of [dev, rita]) {
      const err = await host(token)
        .createHook('olga', 'widget', { url: receiver.url, secret: 'x', events: ['issues'] })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ScmError);
      expect((err as ScmError).status).toBe(c.refused);
      expect((err as ScmError).message).not.toContain(token);
    }
    expect(fake.hooks('olga', 'widget')).toHaveLength(1);
  });

  it('delivers each event signed as the host signs it; verifyDelivery takes the right secret only', async () => {
    for (const event of ALL)
      expect(await fake.deliver('olga', 'widget', event, { action: 'created', event })).toEqual([
        { status: 202, body: 'queued' },
      ]);
    expect(receiver.received).toHaveLength(ALL.length);
    const ids = new Set<string | undefined>();
    receiver.received.forEach(({ headers, body }, i) => {
      const { kind } = c;
      expect(JSON.parse(body.toString('utf8'))).toEqual({ action: 'created', event: ALL[i] });
      expect(kind.verifyDelivery(headers, body, SECRET)).toBe(true);
      const upper = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toUpperCase(), v]));
      expect(kind.verifyDelivery(upper, body, SECRET)).toBe(true);
      expect(kind.verifyDelivery(headers, body, `${SECRET}x`)).toBe(false);
      expect(kind.verifyDelivery(headers, body, '')).toBe(false);
      const changed = Buffer.from(body);
      changed.writeUInt8(changed.readUInt8(changed.length - 2) ^ 1, changed.length - 2);
      expect(kind.verifyDelivery(headers, changed, SECRET)).toBe(!c.signsBody);
      expect(kind.verifyDelivery(without(headers, c.proof), body, SECRET)).toBe(false);
      for (const bad of ['x', 'sha256=zz', 'a'.repeat(64), ''])
        expect(kind.verifyDelivery({ ...without(headers, c.proof), [c.proof[0]!]: bad }, body, SECRET)).toBe(false);
      expect(
        kind.verifyDelivery({ ...headers, [c.proof[0]!]: [String(headers[c.proof[0]!]), 'x'] }, body, SECRET),
      ).toBe(false);
      expect(kind.deliveryEvent(upper)).toBe(c.words[ALL[i]!]);
      ids.add(kind.deliveryId(upper));
    });
    expect(ids.size).toBe(ALL.length);
    expect([...ids].every((id) => typeof id === 'string' && id.length > 0)).toBe(true);
  });

  if (c.alsoAs) {
    const [first, also] = c.alsoAs;
    it(`verifies a delivery that carries only the ${also}* headers`, () => {
      const { headers, body } = receiver.received[0]!;
      const only = Object.fromEntries(Object.entries(headers).filter(([k]) => !k.startsWith(first)));
      expect(Object.keys(only).some((k) => k.startsWith(also))).toBe(true);
      expect(c.kind.verifyDelivery(only, body, SECRET)).toBe(true);
      expect(c.kind.deliveryId(only)).toBe(headers[`${first}delivery`]);
      expect(c.kind.deliveryEvent(only)).toBe(c.words.issue_comment);
    });
  }

  it('deliveryId and deliveryEvent are undefined without the host’s headers', () => {
    expect(c.kind.deliveryId({ 'content-type': 'application/json' })).toBeUndefined();
    expect(c.kind.deliveryEvent({})).toBeUndefined();
  });

  it('updateHook makes a hook that asks for fewer events ask for emend’s, keeping its id, URL and secret; a writer is refused; a hook gone is 404', async () => {
    // As a hook registered before CI follow-ups: some events only (here none).
    fake.setHookEvents('olga', 'widget', Number(hookId), []);
    const refused = await host(dev)
      .updateHook('olga', 'widget', hookId, { url: receiver.url, secret: SECRET, events: ALL })
      .catch((e: unknown) => e);
    expect(refused).toMatchObject({ name: 'ScmError', status: c.refused });
    expect(fake.hooks('olga', 'widget')[0]!.events).toEqual([]);
    await host(olga).updateHook('olga', 'widget', hookId, { url: receiver.url, secret: SECRET, events: ALL });
    const [stored, ...more] = fake.hooks('olga', 'widget');
    expect(more).toEqual([]);
    expect({ id: String(stored!.id), url: stored!.url, secret: stored!.secret, active: stored!.active }).toEqual({
      id: hookId,
      url: receiver.url,
      secret: SECRET,
      active: true,
    });
    expect([...stored!.events].sort()).toEqual(c.stored);
    const gone = await host(olga)
      .updateHook('olga', 'widget', '999999', { url: receiver.url, secret: SECRET, events: ALL })
      .catch((e: unknown) => e);
    expect(gone).toMatchObject({ name: 'ScmError', status: 404 });
  });

  it('deleteHook removes the hook; deleting it again is not an error, and nothing is delivered', async () => {
    // GitHub tells a non-admin 404, which deleteHook takes for "gone": the hook stays, nothing throws.
    const byDev = await host(dev)
      .deleteHook('olga', 'widget', hookId)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    if (c.refused === 404) expect(byDev).toBeUndefined();
    else expect(byDev).toMatchObject({ name: 'ScmError', status: c.refused });
    expect(fake.hooks('olga', 'widget')).toHaveLength(1);
    await host(olga).deleteHook('olga', 'widget', hookId);
    expect(fake.hooks('olga', 'widget')).toEqual([]);
    await expect(host(olga).deleteHook('olga', 'widget', hookId)).resolves.toBeUndefined();
    expect(await fake.deliver('olga', 'widget', 'issues', {})).toEqual([]);
  });
});
