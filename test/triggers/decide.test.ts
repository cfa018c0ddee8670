import { describe, expect, it } from 'vitest';
import type { EventThread, HostEvent } from '../../src/scm/host-events.js';
import { MARKER, decide, eventKey, mentions, requestAfterMention } from '../../src/triggers/decide.js';
import { followUpPrompt, issuePrompt } from '../../src/triggers/prompt.js';
import { PROMPT_LIMITS } from '../../src/tasks/service.js';

const trigger = {
  mention: '@emend',
  label: 'emend',
  events: ['comments', 'labels', 'reviews'],
  repoOwner: 'acme',
  repoName: 'calc',
  ciRounds: 2,
};
const base = {
  repo: { owner: 'acme', name: 'calc' },
  actor: { login: 'rita', id: 7 },
};
const issue: EventThread = {
  kind: 'issue' as const,
  number: 12,
  title: 'Adding is wrong',
  body: 'add(2, 2) gives 0',
  url: 'https://h/acme/calc/issues/12',
};
const pull: EventThread = {
  kind: 'pull' as const,
  number: 13,
  title: 'Fix add',
  body: '',
  url: 'https://h/acme/calc/pull/13',
  headBranch: 'emend/abc',
};
const comment = (
  body: string,
  thread: EventThread = issue,
  action: 'created' | 'edited' | 'deleted' = 'created',
): HostEvent => ({
  ...base,
  kind: 'comment',
  action,
  thread,
  comment: { id: '99', body, url: `${thread.url}#c99` },
});

describe('what a delivery asks of emend, from the payload alone', () => {
  it('a new comment mentioning emend on an issue asks for a task; the request is the words after the mention', () => {
    expect(decide(trigger, comment('@emend please fix the adder'))).toEqual({
      act: 'issue_task',
      request: 'please fix the adder',
    });
    expect(decide(trigger, comment('Could you look, @Emend? It breaks CI.'))).toEqual({
      act: 'issue_task',
      request: 'It breaks CI.',
    });
  });

  it('no mention, a longer name, an e-mail address: nothing', () => {
    for (const body of ['please fix', '@emender fix it', 'mail ops@emend.example', 'see foo@emend'])
      expect(decide(trigger, comment(body))).toEqual({ ignored: 'the comment does not mention @emend' });
  });

  it('edits and deletions start nothing; emend’s own comment is never answered', () => {
    expect(decide(trigger, comment('@emend fix', issue, 'edited'))).toEqual({
      ignored: 'a comment edited starts nothing',
    });
    expect(decide(trigger, comment('@emend fix', issue, 'deleted'))).toEqual({
      ignored: 'a comment deleted starts nothing',
    });
    expect(decide(trigger, comment(`${MARKER}\n@emend is working on this`))).toEqual({
      ignored: "emend's own comment",
    });
  });

  it('a mention on a pull request asks for a follow-up (whether emend opened it is the job’s to find out)', () => {
    expect(decide(trigger, comment('@emend rename x to total', pull))).toEqual({
      act: 'follow_up',
      request: 'rename x to total',
    });
  });

  it('the label starts a task on an issue only, and only the configured label', () => {
    const labeled = (label: string, thread: EventThread = issue, labels?: string[]): HostEvent => ({
      ...base,
      kind: 'labeled',
      thread,
      label,
      ...(labels ? { labels } : {}),
    });
    expect(decide(trigger, labeled('Emend'))).toEqual({ act: 'issue_task', request: '' });
    expect(decide(trigger, labeled('bug'))).toEqual({ ignored: 'the label added is not emend' });
    expect(decide(trigger, labeled('bug', issue, ['bug', 'emend']))).toEqual({ act: 'issue_task', request: '' });
    expect(decide(trigger, labeled('emend', pull))).toEqual({
      ignored: 'the label starts tasks on issues, not on pull requests',
    });
  });

  it('a review requesting changes or commenting that mentions emend asks for a follow-up; approvals and reviews without the mention do not', () => {
    const review = (state: 'changes_requested' | 'approved' | 'commented', body: string): HostEvent => ({
      ...base,
      kind: 'review',
      thread: pull,
      review: { id: '5', state, body, url: `${pull.url}#r5` },
    });
    expect(decide(trigger, review('changes_requested', '@emend see the comments'))).toEqual({
      act: 'follow_up',
      request: 'see the comments',
    });
    expect(decide(trigger, review('approved', '@emend great'))).toEqual({
      ignored: 'an approving review starts nothing',
    });
    expect(decide(trigger, review('commented', '@emend one more thing'))).toEqual({
      act: 'follow_up',
      request: 'one more thing',
    });
    expect(decide(trigger, review('changes_requested', 'please change'))).toEqual({
      ignored: 'the review does not mention @emend',
    });
  });

  it('events left out of the trigger start nothing', () => {
    const only = { ...trigger, events: ['labels'] };
    expect(decide(only, comment('@emend fix'))).toEqual({ ignored: 'comments are not among the trigger’s events' });
    const line: HostEvent = {
      ...base,
      kind: 'line_comment',
      action: 'created',
      thread: pull,
      comment: { id: '3', body: '@emend use a loop', url: 'u', path: 'calc/ops.py', line: 4 },
    };
    expect(decide({ ...trigger, events: ['comments'] }, line)).toEqual({
      ignored: 'reviews are not among the trigger’s events',
    });
    expect(decide(trigger, line)).toEqual({ act: 'follow_up', request: 'use a loop' });
  });

  it('a delivery about another repository (a hook moved with a rename) starts nothing', () => {
    expect(decide(trigger, { ...comment('@emend fix'), repo: { owner: 'acme', name: 'other' } })).toEqual({
      ignored: 'the delivery is about acme/other, not acme/calc',
    });
  });

  it('event keys name the comment and its action, or the review; labels have none', () => {
    expect(eventKey(comment('x'))).toBe('comment:99:created');
    expect(eventKey({ ...base, kind: 'labeled', thread: issue, label: 'emend' })).toBeNull();
    const review = (id: string): HostEvent => ({
      ...base,
      kind: 'review',
      thread: pull,
      review: { id, state: 'changes_requested', body: '', url: 'u' },
    });
    expect(eventKey(review('5'))).toBe('review:5');
    // GitLab and Gitea send no review id: no key, or every later review would count as a redelivery.
    expect(eventKey(review(''))).toBeNull();
  });

  it('mentions and requests', () => {
    expect(mentions('(@emend)', '@emend')).toBe(true);
    expect(mentions('x@emend', '@emend')).toBe(false);
    expect(requestAfterMention('fix the adder @emend', '@emend')).toBe('fix the adder');
  });
});

describe('the prompt of a task asked for on the code host', () => {
  it('puts the request first, then the issue, then earlier comments (not emend’s own), within the prompt limit', () => {
    const earlier = [
      { id: '1', author: 'olga', body: 'It started with 2.0', url: 'u', createdAt: new Date() },
      { id: '2', author: 'emend', body: `${MARKER}\nemend is working on this`, url: 'u', createdAt: new Date() },
    ];
    const prompt = issuePrompt(issue, 'fix the adder', earlier);
    expect(prompt).toBe(
      'Request: fix the adder\n\nIssue #12: Adding is wrong\n\nadd(2, 2) gives 0\n\nEarlier comments, oldest first:\n@olga: It started with 2.0',
    );
    const long = issuePrompt({ ...issue, body: 'x'.repeat(5000) }, 'fix it', earlier);
    expect([...long].length).toBeLessThanOrEqual(PROMPT_LIMITS.max);
    expect(long.startsWith('Request: fix it\n\nIssue #12')).toBe(true);
  });

  it('a follow-up carries the review comments with their files and lines', () => {
    expect(
      followUpPrompt(pull, 'see the comments', [
        { path: 'calc/ops.py', line: 4, body: 'use a loop', author: 'rita' },
        { path: 'README.md', line: null, body: 'mention it', author: 'rita' },
      ]),
    ).toBe(
      'Follow-up on pull request #13 (Fix add): change its branch as the review asks.\n\nRequest: see the comments\n\n' +
        'Review comments on lines:\n- calc/ops.py:4 (@rita): use a loop\n- README.md (@rita): mention it',
    );
  });
});
