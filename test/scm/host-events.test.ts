import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { HostKind } from '../../src/scm/code-host.js';
import { giteaKind } from '../../src/scm/gitea/gitea.js';
import { gitHubKind } from '../../src/scm/github/github.js';
import { gitLabKind } from '../../src/scm/gitlab/gitlab.js';
import type { ReadEvent } from '../../src/scm/host-events.js';

/**
 * Each host kind's `readEvent` over payloads written from the hosts' documentation and source
 * (test/scm/payloads/README.md says where each comes from): what emend reads from a comment, a
 * line comment, a label, a review, and that anything else, a payload missing a field or with one
 * of the wrong type included, is `ignored` with a sentence naming it, never an exception.
 */

type Json = Record<string, unknown>;

function payload(host: string, file: string): Json {
  return JSON.parse(readFileSync(new URL(`./payloads/${host}/${file}.json`, import.meta.url), 'utf8'));
}

/** A copy of `p` with the value at `path` replaced (undefined: removed). */
function altered(p: Json, path: string, value: unknown): Json {
  const copy: Json = structuredClone(p);
  const keys = path.split('.');
  let at: Json = copy;
  for (const key of keys.slice(0, -1)) at = at[key] as Json;
  if (value === undefined) delete at[keys.at(-1)!];
  else at[keys.at(-1)!] = value;
  return copy;
}

function ignoredReason(read: ReadEvent): string {
  if (!('ignored' in read)) throw new Error(`expected the payload ignored, got a ${read.kind} event`);
  return read.ignored;
}

/** Every leaf of a JSON value as a dotted path (arrays' items by index). */
function leaves(value: unknown, prefix = ''): string[] {
  if (typeof value !== 'object' || value === null) return prefix ? [prefix] : [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(prefix ? [`${prefix}.${k}`] : [k]),
    ...leaves(v, prefix ? `${prefix}.${k}` : k),
  ]);
}

/** Removing any field or making it a number, a string, null or a list never makes readEvent throw. */
function neverThrows(kind: HostKind, event: string, p: Json) {
  for (const path of leaves(p)) {
    for (const value of [undefined, 7, 'x', null, [], {}]) {
      const read = kind.readEvent(event, altered(p, path, value));
      expect('ignored' in read ? typeof read.ignored : read.kind).toBeTypeOf('string');
    }
  }
}

describe('GitHub deliveries', () => {
  const read = (event: string, file: string, change?: (p: Json) => Json) =>
    gitHubKind.readEvent(event, change ? change(payload('github', file)) : payload('github', file));

  it('issue_comment on an issue: a comment created, edited or deleted, with the issue, repository and sender', () => {
    expect(read('issue_comment', 'issue_comment')).toEqual({
      kind: 'comment',
      action: 'created',
      repo: { owner: 'Codertocat', name: 'Hello-World' },
      thread: {
        kind: 'issue',
        number: 1,
        title: 'Spelling error in the README file',
        body: "It looks like you accidently spelled 'commit' with two 't's.",
        url: 'https://github.com/Codertocat/Hello-World/issues/1',
      },
      actor: { login: 'Codertocat', id: 21031067 },
      comment: {
        id: '492700400',
        body: '@emend you are totally right! Please fix the spelling.',
        url: 'https://github.com/Codertocat/Hello-World/issues/1#issuecomment-492700400',
      },
    });
    for (const action of ['edited', 'deleted'])
      expect(read('issue_comment', 'issue_comment', (p) => ({ ...p, action }))).toMatchObject({
        kind: 'comment',
        action,
      });
    expect(ignoredReason(read('issue_comment', 'issue_comment', (p) => ({ ...p, action: 'pinned' })))).toContain(
      '"pinned"',
    );
  });

  it('issue_comment on a pull request: a pull thread (issue.pull_request present), no head branch in this payload', () => {
    for (const action of ['created', 'edited', 'deleted']) {
      const e = read('issue_comment', 'issue_comment.pull', (p) => ({ ...p, action }));
      expect(e).toMatchObject({ kind: 'comment', action, thread: { kind: 'pull', number: 2, body: '' } });
      expect(e).not.toHaveProperty('thread.headBranch');
    }
  });

  it('issues labeled: the label added; unlabeled and other issue actions are ignored', () => {
    expect(read('issues', 'issues.labeled')).toMatchObject({
      kind: 'labeled',
      label: 'emend',
      thread: { kind: 'issue', number: 1 },
      actor: { login: 'Codertocat' },
    });
    expect(ignoredReason(read('issues', 'issues.unlabeled'))).toBe('issues "unlabeled": only a label added is read');
    expect(ignoredReason(read('issues', 'issues.labeled', (p) => altered(p, 'label', undefined)))).toBe(
      'the payload has no label',
    );
  });

  it('pull_request labeled: labeled on a pull thread with its head branch', () => {
    expect(read('pull_request', 'pull_request.labeled')).toMatchObject({
      kind: 'labeled',
      label: 'emend',
      thread: { kind: 'pull', number: 2, headBranch: 'changes' },
    });
    expect(read('pull_request', 'pull_request.labeled')).not.toHaveProperty('thread.headRepo');
    expect(ignoredReason(read('pull_request', 'pull_request.labeled', (p) => ({ ...p, action: 'opened' })))).toContain(
      '"opened"',
    );
  });

  it('pull_request_review_comment: a line comment with its path and line, on a pull request from a fork', () => {
    expect(read('pull_request_review_comment', 'pull_request_review_comment')).toEqual({
      kind: 'line_comment',
      action: 'created',
      repo: { owner: 'Codertocat', name: 'Hello-World' },
      thread: {
        kind: 'pull',
        number: 2,
        title: 'Update the README with new information.',
        body: 'This is a pretty simple change that we need to pull into master.',
        url: 'https://github.com/Codertocat/Hello-World/pull/2',
        headBranch: 'changes',
        headRepo: { owner: 'octocat-fork', name: 'Hello-World' },
      },
      actor: { login: 'Codertocat', id: 21031067 },
      comment: {
        id: '284312630',
        body: '@emend this line should say Hello, World.',
        url: 'https://github.com/Codertocat/Hello-World/pull/2#discussion_r284312630',
        path: 'README.md',
        line: 1,
      },
    });
    // On a removed line (or outdated) GitHub sends line null.
    expect(
      read('pull_request_review_comment', 'pull_request_review_comment', (p) => altered(p, 'comment.line', null)),
    ).toMatchObject({ comment: { path: 'README.md', line: null } });
    // The fork deleted: no branch emend could push to.
    const gone = read('pull_request_review_comment', 'pull_request_review_comment', (p) =>
      altered(p, 'pull_request.head.repo', null),
    );
    expect(gone).toMatchObject({ kind: 'line_comment' });
    expect(gone).not.toHaveProperty('thread.headBranch');
    for (const action of ['edited', 'deleted'])
      expect(
        read('pull_request_review_comment', 'pull_request_review_comment', (p) => ({ ...p, action })),
      ).toMatchObject({ action });
  });

  it('pull_request_review submitted: the state lower-cased, a null body as empty text; other actions ignored', () => {
    expect(read('pull_request_review', 'pull_request_review')).toMatchObject({
      kind: 'review',
      thread: { kind: 'pull', number: 2, headBranch: 'changes' },
      review: {
        id: '237895671',
        state: 'changes_requested',
        body: '@emend please handle the empty README too.',
        url: 'https://github.com/Codertocat/Hello-World/pull/2#pullrequestreview-237895671',
      },
    });
    const approved = read('pull_request_review', 'pull_request_review', (p) =>
      altered(altered(p, 'review.state', 'APPROVED'), 'review.body', null),
    );
    expect(approved).toMatchObject({ review: { state: 'approved', body: '' } });
    expect(
      ignoredReason(read('pull_request_review', 'pull_request_review', (p) => ({ ...p, action: 'dismissed' }))),
    ).toBe('pull_request_review "dismissed": only a review submitted is read');
    expect(
      ignoredReason(read('pull_request_review', 'pull_request_review', (p) => altered(p, 'review.state', 'pending'))),
    ).toContain('review.state "pending"');
  });

  it('a ping, or an event emend does not read, is ignored and named', () => {
    expect(read('ping', 'ping')).toEqual({ ignored: 'a ping' });
    expect(ignoredReason(read('push', 'ping'))).toBe('GitHub\'s "push" event is not one emend reads');
  });

  it('a payload missing its repository, or with a number where a string belongs, is ignored naming the field', () => {
    expect(ignoredReason(read('issue_comment', 'issue_comment', (p) => altered(p, 'repository', undefined)))).toBe(
      'the payload has no repository',
    );
    expect(ignoredReason(read('issue_comment', 'issue_comment', (p) => altered(p, 'comment.body', 42)))).toBe(
      "the payload's comment.body is a number, not a string",
    );
    expect(ignoredReason(read('issue_comment', 'issue_comment', (p) => altered(p, 'issue.number', '1')))).toBe(
      "the payload's issue.number is a string, not a number",
    );
    expect(ignoredReason(gitHubKind.readEvent('issue_comment', null))).toBe('the payload is null, not a JSON object');
    expect(ignoredReason(gitHubKind.readEvent('issues', [1]))).toBe('the payload is a list, not a JSON object');
  });

  it('never throws, whatever field is missing or odd', () => {
    neverThrows(gitHubKind, 'issue_comment', payload('github', 'issue_comment.pull'));
    neverThrows(gitHubKind, 'pull_request_review_comment', payload('github', 'pull_request_review_comment'));
    neverThrows(gitHubKind, 'pull_request_review', payload('github', 'pull_request_review'));
  });
});

describe('GitLab deliveries', () => {
  const read = (event: string, file: string, change?: (p: Json) => Json) =>
    gitLabKind.readEvent(event, change ? change(payload('gitlab', file)) : payload('gitlab', file));

  it('Note Hook on an issue: a comment created (action create) or edited (update), the project split into namespace and name', () => {
    expect(read('Note Hook', 'note.issue')).toEqual({
      kind: 'comment',
      action: 'created',
      repo: { owner: 'gitlab-org', name: 'gitlab-test' },
      thread: {
        kind: 'issue',
        number: 17,
        title: 'test',
        body: 'test',
        url: 'http://example.com/gitlab-org/gitlab-test/issues/17',
      },
      actor: { login: 'root', id: 1 },
      comment: {
        id: '1241',
        body: '@emend hello world',
        url: 'http://example.com/gitlab-org/gitlab-test/issues/17#note_1241',
      },
    });
    expect(read('Note Hook', 'note.issue', (p) => altered(p, 'object_attributes.action', 'update'))).toMatchObject({
      action: 'edited',
    });
    // GitLab before 16.11 sent no action, and a note hook on creation only.
    expect(read('Note Hook', 'note.issue', (p) => altered(p, 'object_attributes.action', undefined))).toMatchObject({
      action: 'created',
    });
    // GitLab sends no note hook on a deletion; an action it might add is not guessed at.
    expect(
      ignoredReason(read('Note Hook', 'note.issue', (p) => altered(p, 'object_attributes.action', 'delete'))),
    ).toContain('"delete"');
  });

  it('Note Hook on a merge request: a comment on a pull thread with its source branch', () => {
    for (const [action, verb] of [
      ['create', 'created'],
      ['update', 'edited'],
    ] as const) {
      const e = read('Note Hook', 'note.merge_request', (p) => altered(p, 'object_attributes.action', action));
      expect(e).toMatchObject({
        kind: 'comment',
        action: verb,
        thread: {
          kind: 'pull',
          number: 1,
          headBranch: 'master',
          url: 'http://example.com/gitlab-org/gitlab-test/merge_requests/1',
        },
        comment: { id: '1244', body: 'This MR needs work.' },
      });
      expect(e).not.toHaveProperty('thread.headRepo');
    }
  });

  it('a diff note: a line comment with the new path and line, from a fork, in a subgroup project', () => {
    expect(read('Note Hook', 'note.diff')).toEqual({
      kind: 'line_comment',
      action: 'created',
      repo: { owner: 'gitlab-org/sub', name: 'gitlab-test' },
      thread: {
        kind: 'pull',
        number: 2,
        title: 'Fix the parser',
        body: '',
        url: 'http://example.com/gitlab-org/sub/gitlab-test/-/merge_requests/2',
        headBranch: 'fix-parser',
        headRepo: { owner: 'contributor', name: 'gitlab-test' },
      },
      actor: { login: 'root', id: 1 },
      comment: {
        id: '1250',
        body: '@emend this should return early',
        url: 'http://example.com/gitlab-org/sub/gitlab-test/-/merge_requests/2#note_1250',
        path: 'lib/parser.rb',
        line: 12,
      },
    });
    const removedLine = read('Note Hook', 'note.diff', (p) =>
      altered(altered(p, 'object_attributes.position.new_line', null), 'object_attributes.position.old_line', 9),
    );
    expect(removedLine).toMatchObject({ kind: 'line_comment', comment: { path: 'lib/parser.rb', line: null } });
    expect(
      ignoredReason(read('Note Hook', 'note.diff', (p) => altered(p, 'object_attributes.position', null))),
    ).toContain('DiffNote');
  });

  it('system notes and notes on commits or snippets are ignored', () => {
    expect(
      ignoredReason(read('Note Hook', 'note.issue', (p) => altered(p, 'object_attributes.system', true))),
    ).toContain('system note');
    expect(ignoredReason(read('Note Hook', 'note.commit'))).toBe(
      'a note on a "Commit", not on an issue or a merge request',
    );
    expect(
      ignoredReason(read('Note Hook', 'note.issue', (p) => altered(p, 'object_attributes.noteable_type', 'Snippet'))),
    ).toContain('"Snippet"');
  });

  it('Issue Hook: the labels added (in current, not in previous); a change that only removes is ignored', () => {
    expect(read('Issue Hook', 'issue.labeled')).toEqual({
      kind: 'labeled',
      label: 'Platform',
      labels: ['Platform'],
      repo: { owner: 'gitlabhq', name: 'gitlab-test' },
      thread: {
        kind: 'issue',
        number: 23,
        title: 'New API: create/update/delete file',
        body: 'Create new API for manipulations with repository',
        url: 'http://example.com/diaspora/issues/23',
      },
      actor: { login: 'root', id: 1 },
    });
    expect(ignoredReason(read('Issue Hook', 'issue.unlabeled'))).toBe('no label was added (labels were only removed)');
    expect(ignoredReason(read('Issue Hook', 'issue.labeled', (p) => altered(p, 'changes', {})))).toContain(
      'changes no labels',
    );
    expect(ignoredReason(read('Issue Hook', 'issue.labeled', (p) => ({ ...p, object_kind: 'work_item' })))).toBe(
      'a "work_item", not an issue',
    );
  });

  it('Merge Request Hook: labels added on a pull thread, an approval, a reviewer requesting changes', () => {
    expect(read('Merge Request Hook', 'merge_request.labeled')).toMatchObject({
      kind: 'labeled',
      label: 'Platform',
      labels: ['Platform'],
      thread: { kind: 'pull', number: 1, headBranch: 'ms-viewport' },
    });
    expect(
      ignoredReason(
        read('Merge Request Hook', 'merge_request.labeled', (p) => altered(p, 'changes.labels.current', [])),
      ),
    ).toBe('no label was added (labels were only removed)');
    expect(read('Merge Request Hook', 'merge_request.approval')).toMatchObject({
      kind: 'review',
      actor: { login: 'user1', id: 6 },
      review: { state: 'approved', body: '', id: '' },
    });
    expect(read('Merge Request Hook', 'merge_request.requested_changes')).toEqual({
      kind: 'review',
      repo: { owner: 'awesome_space', name: 'awesome_project' },
      thread: {
        kind: 'pull',
        number: 1,
        title: 'MS-Viewport',
        body: '',
        url: 'http://example.com/awesome_space/awesome_project/-/merge_requests/1',
        headBranch: 'ms-viewport',
      },
      actor: { login: 'user1', id: 6 },
      review: {
        id: '',
        state: 'changes_requested',
        body: '',
        url: 'http://example.com/awesome_space/awesome_project/-/merge_requests/1',
      },
    });
    expect(
      ignoredReason(
        read('Merge Request Hook', 'merge_request.approval', (p) => altered(p, 'object_attributes.action', 'open')),
      ),
    ).toContain('"open"');
  });

  it('an event emend does not read is ignored and named', () => {
    expect(ignoredReason(read('Push Hook', 'note.issue'))).toBe('GitLab\'s "Push Hook" event is not one emend reads');
  });

  it('a payload missing its project, with a number where a string belongs, or a project path without a group, is ignored naming the field', () => {
    expect(ignoredReason(read('Note Hook', 'note.issue', (p) => altered(p, 'project', undefined)))).toBe(
      'the payload has no project',
    );
    expect(ignoredReason(read('Note Hook', 'note.issue', (p) => altered(p, 'object_attributes.note', 5)))).toBe(
      "the payload's object_attributes.note is a number, not a string",
    );
    expect(ignoredReason(read('Issue Hook', 'issue.labeled', (p) => altered(p, 'user.username', 1)))).toBe(
      "the payload's user.username is a number, not a string",
    );
    expect(
      ignoredReason(read('Note Hook', 'note.issue', (p) => altered(p, 'project.path_with_namespace', 'lonely'))),
    ).toBe('the payload\'s project.path_with_namespace "lonely" is not GROUP/…/PROJECT');
  });

  it('never throws, whatever field is missing or odd', () => {
    neverThrows(gitLabKind, 'Note Hook', payload('gitlab', 'note.diff'));
    neverThrows(gitLabKind, 'Issue Hook', payload('gitlab', 'issue.labeled'));
    neverThrows(gitLabKind, 'Merge Request Hook', payload('gitlab', 'merge_request.requested_changes'));
  });
});

describe('Gitea and Forgejo deliveries', () => {
  const read = (event: string, file: string, change?: (p: Json) => Json) =>
    giteaKind.readEvent(event, change ? change(payload('gitea', file)) : payload('gitea', file));

  it('issue_comment on an issue: a comment created, edited or deleted', () => {
    expect(read('issue_comment', 'issue_comment')).toEqual({
      kind: 'comment',
      action: 'created',
      repo: { owner: 'gitea', name: 'webhooks' },
      thread: {
        kind: 'issue',
        number: 1,
        title: 'The README has a typo',
        body: "It says 'Hello Wrold'.",
        url: 'http://localhost:3000/gitea/webhooks/issues/1',
      },
      actor: { login: 'alice', id: 2 },
      comment: {
        id: '4',
        body: '@emend please fix the typo',
        url: 'http://localhost:3000/gitea/webhooks/issues/1#issuecomment-4',
      },
    });
    for (const action of ['edited', 'deleted'])
      expect(read('issue_comment', 'issue_comment', (p) => ({ ...p, action }))).toMatchObject({
        kind: 'comment',
        action,
      });
  });

  it('issue_comment on a pull request (is_pull): a pull thread, with the head branch and fork when the payload has the pull request', () => {
    for (const action of ['created', 'edited', 'deleted'])
      expect(read('issue_comment', 'issue_comment.pull', (p) => ({ ...p, action }))).toMatchObject({
        kind: 'comment',
        action,
        thread: {
          kind: 'pull',
          number: 2,
          headBranch: 'typo',
          headRepo: { owner: 'bob', name: 'webhooks' },
          url: 'http://localhost:3000/gitea/webhooks/pulls/2',
        },
        comment: { id: '9' },
      });
    // Older Gitea sends no pull_request beside the issue: a pull thread without its branch.
    const older = read('issue_comment', 'issue_comment.pull', (p) => altered(p, 'pull_request', undefined));
    expect(older).toMatchObject({ thread: { kind: 'pull', number: 2 } });
    expect(older).not.toHaveProperty('thread.headBranch');
    // The fine word (X-Gitea-Event-Type) for the same payload.
    expect(read('pull_request_comment', 'issue_comment.pull')).toMatchObject({ kind: 'comment', comment: { id: '9' } });
  });

  it('issues label_updated: every label the issue has now, the first as label (Gitea does not say which was added)', () => {
    const e = read('issues', 'issues.label_updated');
    expect(e).toMatchObject({
      kind: 'labeled',
      label: 'bug',
      labels: ['bug', 'emend'],
      thread: { kind: 'issue', number: 1 },
      actor: { login: 'alice' },
    });
    expect(read('issue_label', 'issues.label_updated')).toEqual(e);
    expect(ignoredReason(read('issues', 'issues.label_cleared'))).toBe('every label was removed');
    expect(ignoredReason(read('issues', 'issues.label_updated', (p) => altered(p, 'issue.labels', [])))).toBe(
      'no label is left on it (a label was removed)',
    );
    expect(ignoredReason(read('issues', 'issues.label_updated', (p) => ({ ...p, action: 'opened' })))).toBe(
      'issues "opened": only a change of labels is read',
    );
  });

  it('pull_request label_updated: labeled on a pull thread', () => {
    expect(read('pull_request', 'pull_request.label_updated')).toMatchObject({
      kind: 'labeled',
      label: 'emend',
      labels: ['emend'],
      thread: { kind: 'pull', number: 2, headBranch: 'typo' },
    });
    expect(read('pull_request_label', 'pull_request.label_updated')).toMatchObject({ kind: 'labeled' });
    expect(
      ignoredReason(read('pull_request', 'pull_request.label_updated', (p) => ({ ...p, action: 'synchronized' }))),
    ).toContain('"synchronized"');
  });

  it('a review requesting changes, approving, or of line comments (which the payload does not carry: commented)', () => {
    expect(read('pull_request_rejected', 'pull_request_rejected')).toEqual({
      kind: 'review',
      repo: { owner: 'gitea', name: 'webhooks' },
      thread: {
        kind: 'pull',
        number: 2,
        title: 'Fix the README typo',
        body: 'Fixes #1',
        url: 'http://localhost:3000/gitea/webhooks/pulls/2',
        headBranch: 'emend/3f9a1c2e-fix-the-typo',
      },
      actor: { login: 'alice', id: 2 },
      review: {
        id: '',
        state: 'changes_requested',
        body: '@emend please also handle the empty file',
        url: 'http://localhost:3000/gitea/webhooks/pulls/2',
      },
    });
    expect(read('pull_request_review_rejected', 'pull_request_rejected')).toMatchObject({
      review: { state: 'changes_requested' },
    });
    expect(read('pull_request_approved', 'pull_request_approved')).toMatchObject({ review: { state: 'approved' } });
    expect(read('pull_request_review_approved', 'pull_request_approved')).toMatchObject({
      review: { state: 'approved' },
    });
    expect(read('pull_request_comment', 'pull_request_comment')).toMatchObject({
      kind: 'review',
      review: { state: 'commented', body: '' },
    });
    expect(read('pull_request_review_comment', 'pull_request_comment')).toMatchObject({
      review: { state: 'commented' },
    });
    // Older Gitea sent a review of comments under issue_comment, with the pull request payload.
    expect(read('issue_comment', 'pull_request_comment')).toMatchObject({
      kind: 'review',
      review: { state: 'commented' },
    });
  });

  it('an event emend does not read is ignored and named', () => {
    expect(ignoredReason(read('push', 'issue_comment'))).toBe('Gitea\'s "push" event is not one emend reads');
  });

  it('a payload missing its repository, or with a number where a string belongs, is ignored naming the field', () => {
    expect(ignoredReason(read('issue_comment', 'issue_comment', (p) => altered(p, 'repository', undefined)))).toBe(
      'the payload has no repository',
    );
    expect(
      ignoredReason(read('pull_request_rejected', 'pull_request_rejected', (p) => altered(p, 'repository', undefined))),
    ).toBe('the payload has no repository');
    expect(ignoredReason(read('issue_comment', 'issue_comment', (p) => altered(p, 'comment.body', 3)))).toBe(
      "the payload's comment.body is a number, not a string",
    );
    expect(ignoredReason(read('issues', 'issues.label_updated', (p) => altered(p, 'sender.login', 2)))).toBe(
      "the payload's sender.login is a number, not a string",
    );
    expect(ignoredReason(giteaKind.readEvent('issue_comment', 'text'))).toBe(
      'the payload is a string, not a JSON object',
    );
  });

  it('never throws, whatever field is missing or odd', () => {
    neverThrows(giteaKind, 'issue_comment', payload('gitea', 'issue_comment.pull'));
    neverThrows(giteaKind, 'issues', payload('gitea', 'issues.label_updated'));
    neverThrows(giteaKind, 'pull_request_rejected', payload('gitea', 'pull_request_rejected'));
    neverThrows(giteaKind, 'pull_request_comment', payload('gitea', 'pull_request_comment'));
  });
});
