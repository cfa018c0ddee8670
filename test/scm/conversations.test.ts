import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type HookEvent, type HostKind, type Reaction, ScmError, type ThreadRef } from '../../src/scm/code-host.js';
import { giteaKind } from '../../src/scm/gitea/gitea.js';
import { gitHubKind } from '../../src/scm/github/github.js';
import { gitLabKind } from '../../src/scm/gitlab/gitlab.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';

/**
 * The conversation on each code host, over real HTTP against its double: what a user may do
 * (permission), comments read, written and edited, line comments by review, reactions; and what a
 * person does on the host (the doubles' test side) delivered to a registered hook with the host's
 * event word and payload. One suite, run once per host.
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;
type Payload = Record<string, unknown>;

/** What one delivery should say: its event word (Gitea: and type), action, and fields of its payload. */
type Expected = { event: string; type?: string; fields: Payload };

/** The thread and comment a delivery is about, as the test made them. */
type About = { thread: ThreadRef; title: string; commentId: string; body: string; author: string };

interface HostCase {
  name: string;
  start(): Promise<Fake>;
  kind: HostKind;
  /** The createRepo option naming who may only read. */
  readers: 'reporters' | 'readers';
  /** The number the second thread gets: GitHub and Gitea number issues and pulls as one. */
  pullNumber: number;
  /** emend's reactions in the host's words. */
  reactions: Record<Reaction, string>;
  /** Whether line comments are told apart by review (GitLab's diff notes have no review). */
  reviews: boolean;
  /** Forgejo: its own X-Forgejo-Event(-Type) headers beside Gitea's. */
  forgejo?: boolean;
  /** What a comment's delivery (created, edited, deleted) should be; null: the host sends none. */
  comment(action: 'created' | 'edited' | 'deleted', a: About): Expected | null;
  label(a: Omit<About, 'commentId' | 'body'>, label: string): Expected;
  lineComment(a: About & { path: string; line: number }): Expected;
  /** The deliveries of a review requesting changes with one line comment, in order. */
  review(a: About & { reviewBody: string }): Expected[];
}

const ALL: HookEvent[] = ['issue_comment', 'issues', 'pull_request_review', 'pull_request_review_comment'];
const SAME = { eyes: 'eyes', '+1': '+1', confused: 'confused' } as const;

const githubLike = (a: About) => ({
  repository: { name: 'widget', full_name: 'olga/widget', owner: { login: 'olga' } },
  sender: { login: a.author, id: expect.any(Number) },
});

const GITHUB: HostCase = {
  name: 'GitHub',
  start: () => startFakeGitHub(),
  kind: gitHubKind,
  readers: 'readers',
  pullNumber: 2,
  reactions: SAME,
  reviews: true,
  comment: (action, a) => ({
    event: 'issue_comment',
    fields: {
      action,
      issue: {
        number: a.thread.number,
        title: a.title,
        body: expect.any(String),
        html_url: expect.stringMatching(a.thread.kind === 'pull' ? /\/pull\/\d+$/ : /\/issues\/\d+$/),
        ...(a.thread.kind === 'pull' ? { pull_request: { html_url: expect.any(String) } } : {}),
      },
      comment: {
        id: Number(a.commentId),
        body: a.body,
        html_url: expect.stringContaining(`#issuecomment-${a.commentId}`),
        user: { login: a.author, id: expect.any(Number) },
      },
      ...githubLike(a),
    },
  }),
  label: (a, label) => ({
    event: 'issues',
    fields: {
      action: 'labeled',
      label: { name: label },
      issue: { number: a.thread.number, title: a.title },
      ...githubLike({ ...a, commentId: '', body: '' }),
    },
  }),
  lineComment: (a) => ({
    event: 'pull_request_review_comment',
    fields: {
      action: 'created',
      comment: {
        id: Number(a.commentId),
        body: a.body,
        path: a.path,
        line: a.line,
        html_url: expect.stringContaining(`#discussion_r${a.commentId}`),
        pull_request_review_id: expect.any(Number),
        user: { login: a.author },
      },
      pull_request: {
        number: a.thread.number,
        title: a.title,
        html_url: expect.stringContaining(`/pull/${a.thread.number}`),
        head: { ref: 'fix', repo: { full_name: 'olga/widget' } },
      },
      ...githubLike(a),
    },
  }),
  review: (a) => [
    GITHUB.lineComment({ ...a, path: 'src/a.ts', line: 3 }),
    {
      event: 'pull_request_review',
      fields: {
        action: 'submitted',
        review: {
          id: expect.any(Number),
          state: 'changes_requested',
          body: a.reviewBody,
          html_url: expect.any(String),
        },
        pull_request: { number: a.thread.number, title: a.title },
        ...githubLike(a),
      },
    },
  ],
};

const gitlabNote = (a: About, action: 'create' | 'update', more: Payload = {}) => ({
  event: 'Note Hook',
  fields: {
    ...{ object_kind: 'note', event_type: 'note', user: { username: a.author, id: expect.any(Number) } },
    project: { path_with_namespace: 'olga/widget', web_url: expect.any(String) },
    object_attributes: {
      ...{ id: Number(a.commentId), note: a.body, action },
      noteable_type: a.thread.kind === 'pull' ? 'MergeRequest' : 'Issue',
      url: expect.stringContaining(`#note_${a.commentId}`),
      ...more,
    },
    ...(a.thread.kind === 'pull'
      ? {
          merge_request: {
            iid: a.thread.number,
            title: a.title,
            description: expect.any(String),
            source_branch: 'fix',
          },
        }
      : { issue: { iid: a.thread.number, title: a.title, description: expect.any(String), url: expect.any(String) } }),
  },
});

const GITLAB: HostCase = {
  name: 'GitLab',
  start: () => startFakeGitLab(),
  kind: gitLabKind,
  readers: 'reporters',
  pullNumber: 1,
  reactions: { eyes: 'eyes', '+1': 'thumbsup', confused: 'confused' },
  reviews: false,
  comment: (action, a) =>
    action === 'deleted' ? null : gitlabNote(a, action === 'created' ? 'create' : 'update', { type: null }),
  label: (a, label) => ({
    event: 'Issue Hook',
    fields: {
      ...{ object_kind: 'issue', user: { username: a.author }, project: { path_with_namespace: 'olga/widget' } },
      object_attributes: { iid: a.thread.number, title: a.title, action: 'update', url: expect.any(String) },
      changes: { labels: { previous: [], current: [{ title: label }] } },
    },
  }),
  lineComment: (a) => gitlabNote(a, 'create', { type: 'DiffNote', position: { new_path: a.path, new_line: a.line } }),
  // The diff note, then the review's text as a note of its own (made next: the id after the diff note's).
  review: (a) => [
    gitlabNote(a, 'create', { type: 'DiffNote', position: { new_path: 'src/a.ts', new_line: 3 } }),
    gitlabNote({ ...a, commentId: String(Number(a.commentId) + 1), body: a.reviewBody }, 'create', { type: null }),
  ],
};

const giteaAbout = (a: Omit<About, 'commentId' | 'body'>) => ({
  repository: { name: 'widget', full_name: 'olga/widget', owner: { login: 'olga' } },
  sender: { login: a.author, id: expect.any(Number) },
});

const giteaReview = (a: Omit<About, 'commentId' | 'body'>, type: string, content: string) => ({
  action: 'reviewed',
  number: a.thread.number,
  pull_request: {
    number: a.thread.number,
    title: a.title,
    html_url: expect.stringContaining('/pulls/'),
    head: { ref: 'fix' },
  },
  review: { type, content },
  ...giteaAbout(a),
});

const giteaCase = (name: string, start: () => Promise<Fake>, forgejo = false): HostCase => ({
  name,
  start,
  kind: giteaKind,
  readers: 'readers',
  pullNumber: 2,
  reactions: SAME,
  reviews: true,
  forgejo,
  comment: (action, a) => ({
    event: 'issue_comment',
    type: a.thread.kind === 'pull' ? 'pull_request_comment' : 'issue_comment',
    fields: {
      action,
      issue: {
        number: a.thread.number,
        title: a.title,
        body: expect.any(String),
        html_url: expect.stringMatching(a.thread.kind === 'pull' ? /\/pulls\/\d+$/ : /\/issues\/\d+$/),
        pull_request: a.thread.kind === 'pull' ? { html_url: expect.any(String) } : null,
      },
      comment: {
        id: Number(a.commentId),
        body: a.body,
        html_url: expect.stringContaining(`#issuecomment-${a.commentId}`),
        user: { login: a.author, id: expect.any(Number) },
      },
      is_pull: a.thread.kind === 'pull',
      ...giteaAbout(a),
    },
  }),
  label: (a, label) => ({
    event: 'issues',
    type: 'issue_label',
    fields: {
      ...{ action: 'label_updated', number: a.thread.number },
      issue: { number: a.thread.number, title: a.title, labels: [{ name: label }] },
      ...giteaAbout(a),
    },
  }),
  // Gitea submits a line comment as a review of type comment; its payload names neither path nor line.
  lineComment: (a) => ({
    event: 'pull_request_comment',
    type: 'pull_request_review_comment',
    fields: giteaReview(a, 'pull_request_review_comment', ''),
  }),
  review: (a) => [
    {
      event: 'pull_request_rejected',
      type: 'pull_request_review_rejected',
      fields: giteaReview(a, 'pull_request_review_rejected', a.reviewBody),
    },
  ],
});

const HOSTS: HostCase[] = [
  GITHUB,
  GITLAB,
  giteaCase('Gitea', () => startFakeGitea()),
  giteaCase('Forgejo', () => startFakeGitea({ flavour: 'forgejo' }), true),
];

type Received = { headers: IncomingHttpHeaders; body: Payload };

/** A receiver on 127.0.0.1 that keeps every request and answers 202. */
async function startReceiver() {
  const received: Received[] = [];
  const server: Server = createServer(async (req, res) => {
    received.push({ headers: req.headers, body: JSON.parse(Buffer.concat(await req.toArray()).toString('utf8')) });
    res.writeHead(202, { 'content-type': 'text/plain' }).end('queued');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/in`;
  return { url, received, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe.each(HOSTS)('conversations on $name', (c) => {
  let fake: Fake;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const tokens: Record<string, string> = {};
  const host = (login: string) => c.kind.client({ apiUrl: fake.apiUrl, fetch, token: tokens[login] });
  const issue: ThreadRef = { kind: 'issue', number: 1 };
  let pull: ThreadRef;
  const SECRET = 'whsec-conversations-1';

  beforeAll(async () => {
    [fake, receiver] = await Promise.all([c.start(), startReceiver()]);
    for (const login of ['olga', 'dev', 'rita', 'stan']) tokens[login] = fake.addUser(login).token;
    fake.createRepo('olga', 'widget', { private: true, collaborators: ['dev'], [c.readers]: ['rita'] });
    fake.commit('olga', 'widget', { branch: 'fix', files: { 'src/a.ts': 'a\nb\nc\n' }, message: 'fix' });
    expect(await fake.openIssue('olga', 'widget', { author: 'rita', title: 'It breaks', body: 'When…' })).toMatchObject(
      {
        number: 1,
        url: expect.stringContaining('/issues/1'),
        answers: [],
      },
    );
    const opened = await host('dev').openPull({
      ...{ owner: 'olga', name: 'widget', branch: 'fix', base: 'main' },
      ...{ title: 'Fix it', body: 'Fixes #1', draft: false },
    });
    pull = { kind: 'pull', number: opened.number };
  });
  afterAll(async () => {
    await receiver?.close();
    await fake?.close();
  });

  it('numbers the pull after the issue as the host does', () => {
    expect(pull.number).toBe(c.pullNumber);
  });

  it('permission: the owner and a collaborator write, a reader reads, a stranger and an unknown user do nothing', async () => {
    const asked = async (login: string) => host('olga').permission('olga', 'widget', { login });
    expect(await asked('olga')).toBe('write');
    expect(await asked('dev')).toBe('write');
    expect(await asked('rita')).toBe('read');
    expect(await asked('stan')).toBe('none');
    expect(await asked('nobody-here')).toBe('none');
  });

  it('comment, comments and editComment: a round trip on an issue and on a pull request', async () => {
    const made = await host('dev').comment('olga', 'widget', issue, 'On it.');
    expect(made).toMatchObject({ id: expect.stringMatching(/^\d+$/), author: 'dev', body: 'On it.' });
    expect(made.url).toContain(made.id);
    expect(made.createdAt).toBeInstanceOf(Date);
    await host('rita').comment('olga', 'widget', issue, 'Thanks');
    await host('dev').comment('olga', 'widget', issue, 'Done?');
    await host('dev').editComment('olga', 'widget', issue, made.id, 'On it, today.');
    expect(fake.threadComments('olga', 'widget', issue).map(({ author, body }) => ({ author, body }))).toEqual([
      { author: 'dev', body: 'On it, today.' },
      { author: 'rita', body: 'Thanks' },
      { author: 'dev', body: 'Done?' },
    ]);
    const newest = await host('olga').comments('olga', 'widget', issue, 2);
    expect(newest.map((x) => [x.author, x.body])).toEqual([
      ['rita', 'Thanks'],
      ['dev', 'Done?'],
    ]);
    expect((await host('olga').comments('olga', 'widget', issue, 10)).map((x) => x.body)).toEqual([
      'On it, today.',
      'Thanks',
      'Done?',
    ]);
    const onPull = await host('olga').comment('olga', 'widget', pull, 'Looks right');
    expect(await host('dev').comments('olga', 'widget', pull, 5)).toEqual([onPull]);
    expect(fake.threadComments('olga', 'widget', issue)).toHaveLength(3);
  });

  it('editComment of another’s comment is refused; a stranger neither reads nor writes the private repository', async () => {
    const [first] = fake.threadComments('olga', 'widget', issue);
    const notTheirs = await failure(host('rita').editComment('olga', 'widget', issue, first!.id, 'mine now'));
    expect(notTheirs).toBeInstanceOf(ScmError);
    expect((notTheirs as ScmError).status).toBe(403);
    const stan = host('stan');
    for (const attempt of [
      () => stan.comments('olga', 'widget', issue, 5),
      () => stan.comment('olga', 'widget', issue, 'hello'),
      () => stan.lineComments('olga', 'widget', pull.number),
      () => stan.react('olga', 'widget', { on: 'thread', thread: issue }, 'eyes'),
      () => stan.editComment('olga', 'widget', issue, fake.threadComments('olga', 'widget', issue)[0]!.id, 'x'),
    ]) {
      const err = await failure(attempt());
      expect(err).toBeInstanceOf(ScmError);
      expect((err as ScmError).status).toBe(404);
      expect((err as ScmError).message).not.toContain(tokens.stan);
    }
    expect(fake.threadComments('olga', 'widget', issue).map((x) => x.body)).not.toContain('hello');
    expect(fake.threadComments('olga', 'widget', issue)[0]!.body).toBe('On it, today.');
  });

  it('react: on the thread, a comment and a line comment, once however often it is asked', async () => {
    const [comment] = fake.threadComments('olga', 'widget', issue);
    const { comment: line } = await fake.lineComment('olga', 'widget', pull.number, {
      ...{ author: 'rita', path: 'src/a.ts', line: 2, body: 'Why?' },
    });
    const targets = [
      { on: 'thread', thread: issue },
      { on: 'comment', thread: issue, commentId: comment!.id },
      { on: 'line_comment', thread: pull, commentId: line.id },
    ] as const;
    for (const target of targets) {
      for (let i = 0; i < 2; i++) await host('dev').react('olga', 'widget', target, 'eyes');
      await host('dev').react('olga', 'widget', target, '+1');
      expect(fake.reactions('olga', 'widget', target)).toEqual([
        { user: 'dev', content: c.reactions.eyes },
        { user: 'dev', content: c.reactions['+1'] },
      ]);
    }
  });

  it('lineComments: all of a pull’s, or one review’s', async () => {
    const { reviewId } = await fake.review('olga', 'widget', pull.number, {
      ...{ author: 'olga', state: 'changes_requested', body: 'Two things' },
      comments: [
        { path: 'src/a.ts', line: 1, body: 'Rename' },
        { path: 'src/a.ts', line: 3, body: 'Test it' },
      ],
    });
    const all = await host('dev').lineComments('olga', 'widget', pull.number);
    expect(all.map(({ author, path, line, body }) => ({ author, path, line, body }))).toEqual([
      { author: 'rita', path: 'src/a.ts', line: 2, body: 'Why?' },
      { author: 'olga', path: 'src/a.ts', line: 1, body: 'Rename' },
      { author: 'olga', path: 'src/a.ts', line: 3, body: 'Test it' },
    ]);
    expect(all[0]!.url).toContain(all[0]!.id);
    const ofReview = await host('dev').lineComments('olga', 'widget', pull.number, reviewId);
    expect(ofReview.map((x) => x.body)).toEqual(c.reviews ? ['Rename', 'Test it'] : ['Why?', 'Rename', 'Test it']);
    expect(fake.lineComments('olga', 'widget', pull.number, reviewId).map((x) => x.body)).toEqual([
      'Rename',
      'Test it',
    ]);
  });

  describe('what a person does is delivered to the registered hook', () => {
    const next = () => receiver.received.splice(0);
    const expectDelivered = (got: Received[], want: Expected[]) => {
      expect(got.map((r) => c.kind.deliveryEvent(r.headers))).toEqual(want.map((w) => w.event));
      got.forEach((r, i) => {
        expect(r.body).toMatchObject(want[i]!.fields);
        if (want[i]!.type) expect(r.headers['x-gitea-event-type']).toBe(want[i]!.type);
        if (c.forgejo)
          expect([r.headers['x-forgejo-event'], r.headers['x-forgejo-event-type']]).toEqual([
            want[i]!.event,
            want[i]!.type,
          ]);
      });
    };

    beforeAll(async () => {
      await host('olga').createHook('olga', 'widget', { url: receiver.url, secret: SECRET, events: ALL });
      next();
    });

    it('commentOn, editComment and deleteComment, on an issue and on a pull request', async () => {
      for (const [thread, title] of [
        [issue, 'It breaks'],
        [pull, 'Fix it'],
      ] as const) {
        const made = await fake.commentOn('olga', 'widget', thread, { author: 'rita', body: '@emend fix this' });
        const about: About = { thread, title, commentId: made.comment.id, body: '@emend fix this', author: 'rita' };
        const want = c.comment('created', about);
        expect(made.answers).toEqual([{ event: want!.event, status: 202, body: 'queued' }]);
        const got = next();
        expectDelivered(got, [want!]);
        expect(c.kind.verifyDelivery(got[0]!.headers, Buffer.from(JSON.stringify(got[0]!.body)), SECRET)).toBe(true);

        await fake.editComment('olga', 'widget', made.comment.id, { body: '@emend fix this, please' });
        expectDelivered(next(), [c.comment('edited', { ...about, body: '@emend fix this, please' })!]);
        expect(fake.threadComments('olga', 'widget', thread).at(-1)!.body).toBe('@emend fix this, please');

        await fake.deleteComment('olga', 'widget', made.comment.id);
        const deleted = c.comment('deleted', { ...about, body: '@emend fix this, please' });
        expectDelivered(next(), deleted ? [deleted] : []);
        expect(fake.threadComments('olga', 'widget', thread).map((x) => x.id)).not.toContain(made.comment.id);
      }
    });

    it('addLabel', async () => {
      const { answers } = await fake.addLabel('olga', 'widget', 1, { author: 'olga', label: 'emend' });
      expect(answers.map((a) => a.status)).toEqual([202]);
      expectDelivered(next(), [c.label({ thread: issue, title: 'It breaks', author: 'olga' }, 'emend')]);
    });

    it('lineComment', async () => {
      const made = await fake.lineComment('olga', 'widget', pull.number, {
        ...{ author: 'dev', path: 'src/a.ts', line: 3, body: '@emend use a map here' },
      });
      const about = { thread: pull, title: 'Fix it', commentId: made.comment.id, body: '@emend use a map here' };
      expectDelivered(next(), [c.lineComment({ ...about, author: 'dev', path: 'src/a.ts', line: 3 })]);
      const read = await host('olga').lineComments('olga', 'widget', pull.number, made.reviewId);
      expect(c.reviews ? read : read.slice(-1)).toMatchObject([
        { id: made.comment.id, path: 'src/a.ts', line: 3, author: 'dev' },
      ]);
    });

    it('review requesting changes, with a line comment', async () => {
      const made = await fake.review('olga', 'widget', pull.number, {
        ...{ author: 'olga', state: 'changes_requested', body: '@emend please address' },
        comments: [{ path: 'src/a.ts', line: 3, body: 'here' }],
      });
      const about = { thread: pull, title: 'Fix it', commentId: made.comments[0]!.id, body: 'here', author: 'olga' };
      const want = c.review({ ...about, reviewBody: '@emend please address' });
      expect(made.answers.map((a) => a.event)).toEqual(want.map((w) => w.event));
      expectDelivered(next(), want);
    });
  });
});
