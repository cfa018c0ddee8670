import { connectedAccount } from '../support/host-service.js';
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { creditLedger, tasks } from '../../src/db/schema.js';
import { MARKER } from '../../src/triggers/decide.js';
import { hostEntry } from '../support/code-hosts.js';
import { waitForStatus } from '../support/engine.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import { CALC_REPO, GOOD_FIX, calcStepReply, editBlock, scriptCalcRun, stepOf } from '../support/fix-script.js';
import type { Harness } from '../support/harness.js';
import { type ModelService, startModelService } from '../support/model-service.js';
import { heldPort } from '../support/ports.js';

/**
 * Tasks started on the code host, per host, over real HTTP: the service listens on a loopback
 * port, the fake host delivers its events there in its own format and signature, and emend
 * answers through the host's API as the enabling account. Comment -> task -> pull request ->
 * answer; label -> task, killed -> "stopped"; a review comment -> a follow-up commit on the same
 * branch -> answer; a stranger; credits exhausted; emend's own comment.
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;

interface HostCase {
  kind: 'github' | 'gitlab' | 'gitea';
  start(): Promise<Fake>;
  /** The deployment's only host (GitHub) or a second one beside the harness's fake GitHub. */
  alone?: true;
}

const HOSTS: HostCase[] = [
  { kind: 'github', start: () => startFakeGitHub(), alone: true },
  { kind: 'gitlab', start: () => startFakeGitLab() },
  { kind: 'gitea', start: () => startFakeGitea() },
];

/** The follow-up's change: a docstring on mul(), on top of the first fix. */
const FOLLOW_FIX = `A docstring, as the review asks.\n\n${editBlock(
  'def mul(a, b):\n    return a * b',
  'def mul(a, b):\n    """Return the product of a and b."""\n    return a * b',
)}`;

describe.each(HOSTS)('tasks started on $kind', { timeout: 180_000 }, (host) => {
  /** The repository's owner: the connected user, so that it may add hooks (the hosts' admins only). */
  let ns = '';
  let svc: ModelService | undefined;
  let fake: Fake | undefined;
  afterEach(async () => {
    await svc?.close();
    await fake?.close();
    svc = fake = undefined;
  });

  /**
   * The service listening on a loopback port (its base URL, so the hook points there), an account
   * connected to the host as a user who owns the repository `calc` (an admin: may add hooks);
   * `rita` may push there, `sam` may only read.
   */
  async function setUp(opts: { credits?: number; plan?: 'free' | 'pro' } = {}) {
    const f = await host.start();
    fake = f;
    // Held until the service listens: a port freed at once could be taken while the service starts.
    const held = await heldPort();
    const port = held.port;
    const entry = hostEntry(host.kind, f);
    const env = {
      EMEND_BASE_URL: `http://127.0.0.1:${port}`,
      EMEND_COMMIT_EMAIL: 'bot@emend.example',
      ...(host.alone ? { EMEND_SCM_HOSTS: JSON.stringify([entry]) } : {}),
    };
    svc = await startModelService(env, 'openai', host.alone ? {} : { hosts: [entry] });
    const h = svc.h;
    await held.release();
    await h.app.listen({ port, host: '127.0.0.1' });
    scriptCalcRun(svc.model, (req) => ({
      text: req.text.includes('Follow-up on pull request') ? FOLLOW_FIX : GOOD_FIX,
    }));
    const { account, user } = await connectedAccount(h, f, host.kind, { plan: opts.plan, credits: opts.credits });
    f.addUser('rita');
    f.addUser('sam');
    ns = user.login;
    f.createRepo(ns, 'calc', { files: CALC_REPO, collaborators: ['rita'], readers: ['sam'] });
    const repoUrl = `${f.webUrl}/${ns}/calc`;
    const on = await h.app.inject({
      method: 'PUT',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repoUrl)}`,
      headers: account.auth,
      payload: {},
    });
    expect(on.statusCode, on.body).toBe(201);
    expect(f.hooks(ns, 'calc')).toHaveLength(1);
    return { h, f, account, login: user.login, repoUrl, tokens: [user.token] };
  }

  const triggered = (h: Harness, accountId: string) =>
    h.deps.db
      .select()
      .from(tasks)
      .where(and(eq(tasks.workspaceId, accountId), isNotNull(tasks.trigger)))
      .orderBy(tasks.createdAt);

  async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
      const got = await probe();
      if (got !== undefined) return got;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** emend's comments in a thread: those carrying its marker. */
  const answers = (f: Fake, thread: { kind: 'issue' | 'pull'; number: number }) =>
    f.threadComments(ns, 'calc', thread).filter((c) => c.body.includes(MARKER));

  it('a mention on an issue -> a task -> a pull request that closes it -> one answer, edited; then a review requesting changes -> a follow-up commit on the same branch', async () => {
    const { h, f, account, login } = await setUp();
    const issue = await f.openIssue(ns, 'calc', {
      author: 'rita',
      title: 'add() subtracts',
      body: 'add(2, 3) gives -1',
    });
    await f.commentOn(
      ns,
      'calc',
      { kind: 'issue', number: issue.number },
      { author: 'sam', body: 'Seen it too, since 2.0' },
    );
    const asked = await f.commentOn(
      ns,
      'calc',
      { kind: 'issue', number: issue.number },
      { author: 'rita', body: '@emend please make add(2, 3) return 5' },
    );
    expect(
      asked.answers.map((a) => a.status),
      JSON.stringify(asked.answers),
    ).toEqual([202]);

    const [row] = await waitFor('the task', async () => {
      const rows = await triggered(h, account.account.id);
      return rows.length ? rows : undefined;
    });
    const done = await waitForStatus(h, row!.id, ['done', 'failed', 'cancelled'], 100_000);
    expect(done.status, done.error ?? '').toBe('done');
    expect(done.prompt).toContain('Request: please make add(2, 3) return 5');
    expect(done.prompt).toContain('add(2, 3) gives -1');
    expect(done.prompt).toContain('@sam: Seen it too');
    const api = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${row!.id}`, headers: account.auth })).json().task;
    expect(api.trigger).toEqual({
      host: host.kind,
      kind: 'comment',
      thread: 'issue',
      number: issue.number,
      comment_url: expect.any(String),
      actor: 'rita',
    });
    const listed = await h.app.inject({ method: 'GET', url: '/v1/tasks?origin=code_host', headers: account.auth });
    expect(listed.json().map((t: { id: string }) => t.id)).toEqual([row!.id]);
    const viaApi = await h.app.inject({ method: 'GET', url: '/v1/tasks?origin=api', headers: account.auth });
    expect(viaApi.json()).toEqual([]);

    const [pull] = f.pulls(ns, 'calc');
    expect(pull).toBeDefined();
    expect(pull!.user).toBe(login);
    expect(pull!.body).toContain(`Closes #${issue.number}.`);
    expect(done.prUrl).toContain(String(pull!.number));
    expect(
      f.reactions(ns, 'calc', {
        on: 'comment',
        thread: { kind: 'issue', number: issue.number },
        commentId: asked.comment.id,
      }).length,
    ).toBe(1);
    // One answer, edited in place to the pull request once the task ended.
    const answered = await waitFor('the answer edited', async () => {
      const mine = answers(f, { kind: 'issue', number: issue.number });
      return mine.length === 1 && mine[0]!.body.includes(done.prUrl!) ? mine : undefined;
    });
    expect(answered[0]!.author).toBe(login);
    expect(answered[0]!.body).toContain('merging it closes this issue');

    // A review of emend's pull request requesting changes, mentioning it, with a comment on a line:
    // a follow-up on the same branch (each host delivers it its own way: GitHub the line comment
    // and the review, GitLab the diff note and the review's text as a note, Gitea the review).
    const headBefore = f.branchHead(ns, 'calc', pull!.head.ref);
    const review = await f.review(ns, 'calc', pull!.number, {
      author: 'rita',
      state: 'changes_requested',
      body: '@emend give mul a docstring too',
      comments: [{ path: 'calc/ops.py', line: 6, body: 'mul needs a docstring' }],
    });
    expect(
      review.answers.filter((a) => a.status === 202),
      JSON.stringify(review.answers),
    ).toHaveLength(1);
    expect(review.answers.every((a) => a.status === 200 || a.status === 202)).toBe(true);
    const follow = await waitFor('the follow-up', async () => {
      const rows = await triggered(h, account.account.id);
      return rows.length === 2 ? rows[1] : undefined;
    });
    expect(follow.parentId).toBe(row!.id);
    expect(follow.baseBranch).toBe(pull!.head.ref);
    expect(follow.prompt).toContain('Request: give mul a docstring too');
    expect(follow.prompt).toContain('calc/ops.py:6 (@rita): mul needs a docstring');
    const followed = await waitForStatus(h, follow.id, ['done', 'failed', 'cancelled'], 100_000);
    expect(followed.status, followed.error ?? '').toBe('done');
    expect(f.pulls(ns, 'calc')).toHaveLength(1);
    const headAfter = f.branchHead(ns, 'calc', pull!.head.ref);
    expect(headAfter).not.toBe(headBefore);
    const files = f.files(ns, 'calc', pull!.head.ref);
    expect(files['calc/ops.py']).toContain('return a + b');
    expect(files['calc/ops.py']).toContain('Return the product of a and b.');
    await waitFor('the follow-up answered', async () => {
      const mine = answers(f, { kind: 'pull', number: pull!.number });
      return mine.some((c) => c.body.includes('pushed its follow-up')) ? true : undefined;
    });
    // emend never answered itself: one answer in the issue, one in the pull request.
    expect(answers(f, { kind: 'issue', number: issue.number })).toHaveLength(1);
    expect(answers(f, { kind: 'pull', number: pull!.number })).toHaveLength(1);
  });

  it('a follow-up never pushes over a person: the branch moved while it worked, nothing is pushed, the answer says why', async () => {
    const { h, f, account } = await setUp();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let reached!: () => void;
    const atFixer = new Promise<void>((r) => {
      reached = r;
    });
    // The script of setUp, but the follow-up's fixer answers only once Rita has pushed.
    svc!.model.respond(async (req) => {
      if (stepOf(req) !== 'fixer') return calcStepReply(req);
      if (!req.text.includes('Follow-up on pull request')) return { text: GOOD_FIX };
      reached();
      await gate;
      return { text: FOLLOW_FIX };
    });
    const issue = await f.openIssue(ns, 'calc', { author: 'rita', title: 'add() subtracts', body: '' });
    await f.commentOn(ns, 'calc', { kind: 'issue', number: issue.number }, { author: 'rita', body: '@emend fix add' });
    const first = await waitFor('the task', async () => (await triggered(h, account.account.id))[0]);
    expect((await waitForStatus(h, first.id, ['done', 'failed', 'cancelled'], 100_000)).status).toBe('done');
    const [pull] = f.pulls(ns, 'calc');
    const thread = { kind: 'pull' as const, number: pull!.number };
    await f.commentOn(ns, 'calc', thread, { author: 'rita', body: '@emend give mul a docstring' });
    await atFixer;
    // Rita pushes to the branch while emend's follow-up is working.
    f.commit(ns, 'calc', {
      branch: pull!.head.ref,
      files: { 'NOTES.md': 'reviewed\n' },
      message: 'reviewer note',
      author: { name: 'Rita', email: 'rita@example.com' },
    });
    const hers = f.branchHead(ns, 'calc', pull!.head.ref);
    release();
    const follow = (await triggered(h, account.account.id))[1]!;
    const ended = await waitForStatus(h, follow.id, ['done', 'failed', 'cancelled'], 100_000);
    expect(ended.status).toBe('failed');
    expect(ended.error).toContain('moved while emend worked');
    expect(f.branchHead(ns, 'calc', pull!.head.ref)).toBe(hers);
    expect(f.files(ns, 'calc', pull!.head.ref)['calc/ops.py']).not.toContain('Return the product');
    await waitFor('the failure in the thread', async () =>
      answers(f, thread).some(
        (c) => c.body.includes('emend could not finish') && c.body.includes('moved while emend worked'),
      )
        ? true
        : undefined,
    );
    expect(f.pulls(ns, 'calc')).toHaveLength(1);
  });

  it('on a plan that runs previews, the task is a preview and the answer links it; no pull request, no credit', async () => {
    const { h, f, account } = await setUp({ plan: 'free' });
    const issue = await f.openIssue(ns, 'calc', {
      author: 'rita',
      title: 'add() subtracts',
      body: 'add(2, 3) gives -1',
    });
    const thread = { kind: 'issue' as const, number: issue.number };
    await f.commentOn(ns, 'calc', thread, { author: 'rita', body: '@emend fix add' });
    const row = await waitFor('the task', async () => (await triggered(h, account.account.id))[0]);
    expect(row.mode).toBe('preview');
    const done = await waitForStatus(h, row.id, ['done', 'failed', 'cancelled'], 100_000);
    expect(done.status, done.error ?? '').toBe('done');
    await waitFor('the preview answer', async () =>
      answers(f, thread).some((c) => c.body.includes('as a preview') && c.body.includes(row.id)) ? true : undefined,
    );
    expect(f.pulls(ns, 'calc')).toEqual([]);
    expect(await h.deps.db.select().from(creditLedger).where(eq(creditLedger.taskId, row.id))).toEqual([]);
  });

  it('the label starts a task; a second mention answers with its link; edits and deletions start nothing; a kill stops it, the answer says so, and no credit is taken', async () => {
    const { h, f, account } = await setUp();
    svc!.model.respond(() => new Promise(() => {}));
    const issue = await f.openIssue(ns, 'calc', {
      author: 'rita',
      title: 'add() subtracts',
      body: 'add(2, 3) gives -1',
    });
    const labeled = await f.addLabel(ns, 'calc', issue.number, { author: 'rita', label: 'emend' });
    expect(labeled.answers.map((a) => a.status)).toContain(202);
    const row = await waitFor('the task', async () => (await triggered(h, account.account.id))[0]);
    expect(row.trigger).toMatchObject({ kind: 'label', thread: 'issue', number: issue.number, actor: 'rita' });
    await waitForStatus(h, row.id, ['running']);
    // Asked again while it runs: the answer is the running task's link, not a second task.
    const thread = { kind: 'issue' as const, number: issue.number };
    const again = await f.commentOn(ns, 'calc', thread, { author: 'rita', body: '@emend are you on it?' });
    expect(again.answers.map((a) => a.status)).toEqual([202]);
    await waitFor('the link to the running task', async () =>
      answers(f, thread).some((c) => c.body.includes('already working on this issue') && c.body.includes(row.id))
        ? true
        : undefined,
    );
    expect(await triggered(h, account.account.id)).toHaveLength(1);
    // Editing the comment starts nothing (GitLab sends no event for a deletion; the others say 'deleted').
    const edited = await f.editComment(ns, 'calc', again.comment.id, { body: '@emend fix it again' });
    for (const a of edited.answers) expect(JSON.parse(a.body)).toMatchObject({ outcome: 'ignored' });
    const deleted = await f.deleteComment(ns, 'calc', again.comment.id);
    for (const a of deleted.answers) expect(JSON.parse(a.body)).toMatchObject({ outcome: 'ignored' });
    const kill = await h.app.inject({ method: 'POST', url: `/v1/tasks/${row.id}/kill`, headers: account.auth });
    expect(kill.statusCode, kill.body).toBe(200);
    await waitFor('the answer "stopped"', async () =>
      answers(f, { kind: 'issue', number: issue.number }).some((c) => c.body.includes('emend stopped'))
        ? true
        : undefined,
    );
    const ledger = await h.deps.db.select().from(creditLedger).where(eq(creditLedger.taskId, row.id));
    expect(ledger.map((l) => l.kind).sort()).toEqual(['hold', 'release']);
  });

  it('a stranger is told who may ask; no credits is said in plain words; nothing is charged; a redelivery creates nothing, a forged one is 401', async () => {
    const { h, f, account } = await setUp({ credits: 0 });
    const issue = await f.openIssue(ns, 'calc', { author: 'rita', title: 'add() subtracts', body: '' });
    const thread = { kind: 'issue' as const, number: issue.number };
    await f.commentOn(ns, 'calc', thread, { author: 'sam', body: '@emend fix this please' });
    await waitFor('the reply to sam', async () =>
      answers(f, thread).some((c) => c.body.includes('@sam') && c.body.includes('can write to this repository'))
        ? true
        : undefined,
    );
    const ritas = f.sent().length;
    await f.commentOn(ns, 'calc', thread, { author: 'rita', body: '@emend fix this please' });
    await waitFor('the reply to rita', async () =>
      answers(f, thread).some((c) => c.body.includes('@rita') && c.body.includes('no credits left')) ? true : undefined,
    );
    // The same delivery again (the host's Redeliver) creates nothing new; one whose signature or
    // token is wrong is refused before anything is read.
    const again = await f.resend(ritas);
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toMatchObject({ outcome: 'duplicate' });
    const forged = Object.fromEntries(
      Object.entries(f.sent()[ritas]!.headers)
        .filter(([k]) => /signature|token/i.test(k))
        .map(([k, v]) => [
          k,
          v.startsWith('sha256=')
            ? `sha256=${'0'.repeat(64)}`
            : /^[0-9a-f]{64}$/.test(v)
              ? '0'.repeat(64)
              : 'not-the-secret',
        ]),
    );
    expect(Object.keys(forged).length).toBeGreaterThan(0);
    const refused = await f.resend(ritas, forged);
    expect(refused.status).toBe(401);
    expect(await triggered(h, account.account.id)).toEqual([]);
    expect(await h.deps.db.select().from(creditLedger).where(eq(creditLedger.workspaceId, account.account.id))).toEqual(
      [],
    );
    // emend's replies were delivered back to it and ignored: still exactly two.
    expect(answers(f, thread)).toHaveLength(2);
  });
});
