import { connectedAccount } from '../support/host-service.js';
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { hostFor } from '../../src/workspaces/scm-connection.js';
import { creditLedger, repoTriggers, tasks, triggerDeliveries } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { hostById } from '../../src/scm/hosts.js';
import { MARKER } from '../../src/triggers/decide.js';
import { hostEntry } from '../support/code-hosts.js';
import { waitForStatus } from '../support/engine.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import { CALC_REPO } from '../support/fix-script.js';
import { type ModelService, startModelService } from '../support/model-service.js';
import { heldPort } from '../support/ports.js';

/**
 * Two deliveries asking for a task on the same thread at once (issue 42): exactly one task starts,
 * one credit is held, and the other asker is answered in the thread with that task's link. The
 * race is made certain, not likely: the fake host holds both jobs' permission requests (asked
 * after the early look for a running task, before the task is created) until both have arrived.
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;

const HOSTS: { kind: 'github' | 'gitlab' | 'gitea'; start(): Promise<Fake>; alone?: true }[] = [
  { kind: 'github', start: () => startFakeGitHub(), alone: true },
  { kind: 'gitlab', start: () => startFakeGitLab() },
  { kind: 'gitea', start: () => startFakeGitea() },
];

/** Each host's "what may this person do here" request (GitHub and Gitea: collaborators' permission; GitLab: members/all). */
const PERMISSION = /\/collaborators\/[^/]+\/permission$|\/members\/all\/[^/]+$/;

type Thread = { kind: 'issue' | 'pull'; number: number };
type Answers = { answers: { status: number }[] };

describe.each(HOSTS)('two deliveries at once on $kind', { timeout: 120_000 }, (host) => {
  let svc: ModelService | undefined;
  let fake: Fake | undefined;
  afterEach(async () => {
    await svc?.close();
    await fake?.close();
    svc = fake = undefined;
  });

  /** The service on a loopback port, triggers on for `calc` (owned by the connected user); rita and ann may push. */
  async function setUp() {
    const f = await host.start();
    fake = f;
    const { port, release } = await heldPort();
    const entry = hostEntry(host.kind, f);
    svc = await startModelService(
      {
        EMEND_BASE_URL: `http://127.0.0.1:${port}`,
        EMEND_COMMIT_EMAIL: 'bot@emend.example',
        ...(host.alone ? { EMEND_SCM_HOSTS: JSON.stringify([entry]) } : {}),
      },
      'openai',
      host.alone ? {} : { hosts: [entry] },
    );
    const h = svc.h;
    await release();
    await h.app.listen({ port, host: '127.0.0.1' });
    // The tasks stay active (their model never answers): the second asker meets a running task.
    svc.model.respond(() => new Promise(() => {}));
    const { account, user } = await connectedAccount(h, f, host.kind, { credits: 5 });
    f.addUser('rita');
    f.addUser('ann');
    const ns = user.login;
    f.createRepo(ns, 'calc', { files: CALC_REPO, collaborators: ['rita', 'ann'] });
    const repoUrl = `${f.webUrl}/${ns}/calc`;
    const on = await h.app.inject({
      method: 'PUT',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repoUrl)}`,
      headers: account.auth,
      payload: {},
    });
    expect(on.statusCode, on.body).toBe(201);
    const workspaceId = account.workspace.id;

    /** A pull request on `calc` that emend opened for the workspace (a finished task carrying its URL). */
    async function emendsPull(): Promise<number> {
      f.commit(ns, 'calc', { branch: 'emend/1-fix-add', from: 'main', files: { 'NOTES.md': 'fixed\n' } });
      const client = hostFor(h.deps, hostById(h.deps.config, host.kind)!, user.token);
      const pull = await client.openPull({
        owner: ns,
        name: 'calc',
        branch: 'emend/1-fix-add',
        base: 'main',
        title: 'Fix add',
        body: 'Closes #1.',
        draft: false,
      });
      await h.deps.db.insert(tasks).values({
        id: newId(),
        workspaceId,
        taskType: 'fix',
        mode: 'pr',
        status: 'done',
        prompt: 'fix add',
        repoUrl,
        repoOwner: ns,
        repoName: 'calc',
        prUrl: pull.url,
        createdAt: h.clock.now(),
      });
      return pull.number;
    }

    /**
     * Runs the two people's actions at once, their permission checks held until both have been
     * asked, and waits until emend has acted on every delivery; what came of them.
     */
    async function race(thread: Thread, actions: [() => Promise<Answers>, () => Promise<Answers>]) {
      const [trigger] = await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.workspaceId, workspaceId));
      const deliveriesNow = () =>
        h.deps.db.select().from(triggerDeliveries).where(eq(triggerDeliveries.triggerId, trigger!.id));
      const before = new Set((await deliveriesNow()).map((d) => d.id));
      f.holdTogether('GET', PERMISSION, 2);
      const sent = await Promise.all(actions.map((a) => a()));
      for (const s of sent)
        expect(
          s.answers.map((a) => a.status),
          JSON.stringify(s.answers),
        ).toEqual([202]);
      const deadline = Date.now() + 30_000;
      let deliveries: (typeof triggerDeliveries.$inferSelect)[] = [];
      for (;;) {
        deliveries = (await deliveriesNow()).filter((d) => !before.has(d.id));
        if (deliveries.length === 2 && deliveries.every((d) => d.status !== 'received' && d.status !== 'acting')) break;
        if (Date.now() > deadline) throw new Error(`deliveries not acted on: ${JSON.stringify(deliveries)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const started = await h.deps.db
        .select()
        .from(tasks)
        .where(and(eq(tasks.workspaceId, workspaceId), isNotNull(tasks.trigger)));
      const holds = await h.deps.db
        .select()
        .from(creditLedger)
        .where(and(eq(creditLedger.workspaceId, workspaceId), eq(creditLedger.kind, 'hold')));
      const replies = f
        .threadComments(ns, 'calc', thread)
        .filter((c) => c.body.includes(MARKER) && c.body.includes('already working on this'));
      // Killed once running, and its "stopped" answer written, so the worker is idle when the service closes.
      for (const t of started) {
        await waitForStatus(h, t.id, 'running');
        await h.app.inject({ method: 'POST', url: `/v1/tasks/${t.id}/kill`, headers: account.auth });
        await waitForStatus(h, t.id, 'cancelled');
        for (const end = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 50))) {
          if (
            f
              .threadComments(ns, 'calc', thread)
              .some((c) => c.body.includes(MARKER) && c.body.includes('emend stopped'))
          )
            break;
          if (Date.now() > end) throw new Error('the answer never said "stopped"');
        }
      }
      return { deliveries, started, holds, replies };
    }

    /** One task started, one credit held, the other delivery answered in the thread with that task's link. */
    function expectOneTask(r: Awaited<ReturnType<typeof race>>) {
      expect(
        r.started.map((t) => t.trigger),
        JSON.stringify(r.deliveries.map((d) => [d.status, d.reason])),
      ).toHaveLength(1);
      const task = r.started[0]!;
      expect(r.holds.map((l) => l.taskId)).toEqual([task.id]);
      expect(r.deliveries.map((d) => d.status).sort()).toEqual(['answered', 'started']);
      expect(r.deliveries.find((d) => d.status === 'started')!.taskId).toBe(task.id);
      expect(r.deliveries.find((d) => d.status === 'answered')!.reason).toContain(task.id);
      expect(r.replies).toHaveLength(1);
      expect(r.replies[0]!.body).toContain(`/app/tasks/${task.id}`);
      return task;
    }

    return { f, ns, race, emendsPull, expectOneTask };
  }

  it('two mentions on an issue: one task, one credit, the other answered with its link', async () => {
    const { f, ns, race, expectOneTask } = await setUp();
    const issue = await f.openIssue(ns, 'calc', {
      author: 'rita',
      title: 'add() subtracts',
      body: 'add(2, 3) gives -1',
    });
    const thread = { kind: 'issue' as const, number: issue.number };
    const r = await race(thread, [
      () => f.commentOn(ns, 'calc', thread, { author: 'rita', body: '@emend please make add(2, 3) return 5' }),
      () => f.commentOn(ns, 'calc', thread, { author: 'ann', body: '@emend fix add please' }),
    ]);
    expect(expectOneTask(r).trigger).toMatchObject({ kind: 'comment', thread: 'issue', number: issue.number });
  });

  it('the label and a mention on an issue at once: one task, one credit, the other answered with its link', async () => {
    const { f, ns, race, expectOneTask } = await setUp();
    const issue = await f.openIssue(ns, 'calc', {
      author: 'rita',
      title: 'add() subtracts',
      body: 'add(2, 3) gives -1',
    });
    const thread = { kind: 'issue' as const, number: issue.number };
    const r = await race(thread, [
      () => f.addLabel(ns, 'calc', issue.number, { author: 'rita', label: 'emend' }),
      () => f.commentOn(ns, 'calc', thread, { author: 'ann', body: '@emend fix add please' }),
    ]);
    expect(expectOneTask(r).trigger).toMatchObject({ thread: 'issue', number: issue.number });
  });

  it("two reviews of emend's pull request: one follow-up, one credit, the other answered with its link", async () => {
    const { f, ns, race, emendsPull, expectOneTask } = await setUp();
    const pull = await emendsPull();
    const r = await race({ kind: 'pull', number: pull }, [
      () =>
        f.review(ns, 'calc', pull, { author: 'rita', state: 'changes_requested', body: '@emend give mul a docstring' }),
      () => f.review(ns, 'calc', pull, { author: 'ann', state: 'commented', body: '@emend and add one to add' }),
    ]);
    const task = expectOneTask(r);
    expect(task.trigger).toMatchObject({ thread: 'pull', number: pull });
    expect(task.parentId).not.toBeNull();
  });

  it("two line comments on emend's pull request: one follow-up, one credit, the other answered with its link", async () => {
    const { f, ns, race, emendsPull, expectOneTask } = await setUp();
    const pull = await emendsPull();
    // Gitea delivers a line comment as a commenting review that names no line: its text carries the mention.
    const onLine = (author: string, line: number, body: string) =>
      host.kind === 'gitea'
        ? f.review(ns, 'calc', pull, {
            author,
            state: 'commented',
            body,
            comments: [{ path: 'calc/ops.py', line, body }],
          })
        : f.lineComment(ns, 'calc', pull, { author, path: 'calc/ops.py', line, body });
    const r = await race({ kind: 'pull', number: pull }, [
      () => onLine('rita', 6, '@emend a docstring here'),
      () => onLine('ann', 2, '@emend and here'),
    ]);
    expect(expectOneTask(r).trigger).toMatchObject({ thread: 'pull', number: pull });
  });
});
