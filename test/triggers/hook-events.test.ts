import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvents, repoTriggers } from '../../src/db/schema.js';
import { IDEMPOTENCY_SWEEP_MS } from '../../src/engine/worker.js';
import {
  FAKE_HOSTS,
  type FakeHost,
  type HostKind,
  type HostService,
  startHostService,
} from '../support/host-service.js';

/**
 * Hooks made before CI follow-ups (docs/triggers.md): a trigger's webhook that asks for none of the
 * checks' events (as every hook registered before them) gets them from the workers' sweep, through
 * the host's API (GitHub and Gitea PATCH …/hooks/{id}, GitLab PUT), keeping its URL and secret; the
 * host's CI deliveries then reach emend, verified. A hook the host will not change is tried again
 * on a later pass. Per host, over real HTTP.
 */

type Kind = HostKind;

/** What each adapter asked its host for before CI follow-ups, in the host's words. */
const BEFORE_CI: Record<Kind, string[]> = {
  github: ['issue_comment', 'issues', 'pull_request_review', 'pull_request_review_comment'],
  gitlab: ['issues_events', 'note_events', 'merge_requests_events'],
  gitea: ['issue_comment', 'pull_request_comment', 'issues', 'pull_request_review'],
};

describe.each(FAKE_HOSTS)('hooks made before CI follow-ups on $kind', { timeout: 60_000 }, (host) => {
  let svc: HostService;
  let fake: FakeHost;
  let h: HostService['h'];
  let worker: HostService['worker'];
  let account: HostService['account'];
  let ns = '';

  beforeAll(async () => {
    svc = await startHostService(host, 5);
    ({ fake, h, worker, account } = svc);
    ns = svc.user.login;
  });
  afterAll(async () => {
    await svc?.close();
  });

  /** Triggers on for a new repository, their hook then made to look as one made before CI follow-ups. */
  async function oldTrigger(name: string) {
    fake.createRepo(ns, name, { files: { 'README.md': '# r\n' } });
    const on = await h.app.inject({
      method: 'PUT',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(`${fake.webUrl}/${ns}/${name}`)}`,
      headers: account.auth,
      payload: {},
    });
    expect(on.statusCode, on.body).toBe(201);
    const [fresh] = fake.hooks(ns, name);
    const [row] = await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.repoName, name));
    // A new trigger's hook asks for the checks too, and says so.
    expect(row!.hookEvents).toEqual([
      'issue_comment',
      'issues',
      'pull_request_review',
      'pull_request_review_comment',
      'ci',
    ]);
    expect(fresh!.events).not.toEqual(BEFORE_CI[host.kind]);
    fake.setHookEvents(ns, name, fresh!.id, BEFORE_CI[host.kind]);
    await h.deps.db.update(repoTriggers).set({ hookEvents: null }).where(eq(repoTriggers.id, row!.id));
    return { name, trigger: row!, fresh: fresh! };
  }

  /** A failing check on the repository's default branch: what the host's deliveries were answered. */
  const failCi = async (name: string) =>
    (await fake.reportCi(ns, name, { branch: 'main', jobs: [{ name: 'test', state: 'failure' }] })).answers;

  /** The next maintenance pass runs the periodic jobs again (one claim per period). */
  const nextPass = async () => {
    h.clock.advance(IDEMPOTENCY_SWEEP_MS);
    await worker.maintain();
  };

  it("the workers' sweep asks the host for the checks' events, keeps the hook's URL and secret, records it with an audit row; the CI deliveries then arrive, verified; a second pass asks nothing", async () => {
    const old = await oldTrigger('calc');
    expect(await failCi('calc')).toEqual([]);

    await nextPass();
    const [hook, ...more] = fake.hooks(ns, 'calc');
    expect(more).toEqual([]);
    expect([...hook!.events].sort()).toEqual([...old.fresh.events].sort());
    expect(hook).toMatchObject({ id: old.fresh.id, url: old.fresh.url, secret: old.fresh.secret, active: true });
    const [row] = await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.id, old.trigger.id));
    expect(row!.hookEvents).toContain('ci');
    const audit = await h.deps.db
      .select()
      .from(auditEvents)
      .where(and(eq(auditEvents.workspaceId, account.workspace.id), eq(auditEvents.action, 'triggers.changed')));
    const mine = audit.filter((a) => a.targets.trigger_id === old.trigger.id && a.detail.by === 'service');
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ actorAccountId: null, detail: { hook_events_added: ['ci'] } });

    // The host now delivers the checks, signed (or sent) with the hook's secret as before: accepted, not 401.
    const answers = await failCi('calc');
    expect(answers.length).toBeGreaterThan(0);
    for (const a of answers) expect([200, 202], a.body).toContain(a.status);

    const at = fake.requests.length;
    await nextPass();
    expect(fake.requests.slice(at).filter((r) => /\/hooks\//.test(r.path))).toEqual([]);
  });

  it('a hook the host will not change (removed there) is left as it is and tried again on a later pass', async () => {
    const old = await oldTrigger('gone');
    const hooks = () => fake.hooks(ns, 'gone');
    // Someone removed the hook on the host, by hand.
    const at = fake.requests.length;
    const del = await fetch(`${fake.apiUrl}${deletePath(host.kind, ns, 'gone', old.fresh.id)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${fake.addUser(ns).token}` },
    });
    expect(del.status).toBe(204);
    expect(hooks()).toEqual([]);
    await nextPass();
    const asked = fake.requests.slice(at + 1).filter((r) => /\/hooks\//.test(r.path));
    expect(asked.map((r) => [r.method, r.status])).toEqual([[host.kind === 'gitlab' ? 'PUT' : 'PATCH', 404]]);
    const [row] = await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.id, old.trigger.id));
    expect(row!.hookEvents).toBeNull();
    await nextPass();
    expect(fake.requests.slice(at + 1).filter((r) => /\/hooks\//.test(r.path))).toHaveLength(2);
  });
});

/** The host's REST path of a repository's hook. */
function deletePath(kind: Kind, owner: string, name: string, id: number): string {
  if (kind === 'gitlab') return `/projects/${encodeURIComponent(`${owner}/${name}`)}/hooks/${id}`;
  return `/repos/${owner}/${name}/hooks/${id}`;
}
