import type { HostEvent } from '../scm/host-events.js';
import type { TriggerEvent } from './repo-triggers.js';

/**
 * What a verified delivery asks of emend, decided from the payload and the trigger's options
 * alone (no code-host call: the receiving route answers before any). Whether a pull request is
 * one emend opened, whether the person may ask, and whether a failing check is one to act on
 * (docs/triggers.md, "CI follow-ups") are the job's to find out.
 */

/** The hidden marker every comment emend writes carries: a delivery of one is emend hearing itself. */
export const MARKER = '<!-- emend -->';

export interface TriggerOptionsView {
  mention: string;
  label: string;
  events: string[];
  repoOwner: string;
  repoName: string;
  /** Automatic CI follow-ups per pull request (0: off). */
  ciRounds: number;
}

export type Decision =
  /** A fix task from an issue: a mention in a comment, or the label added. `request`: the words after the mention. */
  | { act: 'issue_task'; request: string }
  /** A follow-up on a pull request: a mention in its conversation, on a line, or in a review requesting changes. */
  | { act: 'follow_up'; request: string }
  /**
   * A CI follow-up on a pull request: a check failed (automatic), or a person asked for one in its
   * conversation (`@emend fix the CI`: manual).
   */
  | { act: 'ci_round'; manual: boolean; request: string }
  | { ignored: string };

/** Whether `text` mentions `mention` as a whole name (`@emend`, not `@emender` or an e-mail address). */
export function mentions(text: string, mention: string): boolean {
  return mentionAt(text, mention) >= 0;
}

/** `text` as a regular expression matching it literally. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function mentionAt(text: string, mention: string): number {
  const m = new RegExp(`(^|[^\\w.@-])${literal(mention)}(?![\\w-])`, 'i').exec(text);
  return m ? m.index + m[1]!.length : -1;
}

/** The words after the first mention (the request), or the whole text when the mention ends it. */
export function requestAfterMention(text: string, mention: string): string {
  const at = mentionAt(text, mention);
  // "@emend, please…" and "@emend: please…": the request starts after the punctuation.
  const after = at < 0 ? text : text.slice(at + mention.length).replace(/^[\s,:;.!?-]+/, '');
  return after.trim() || text.replace(new RegExp(literal(mention), 'ig'), '').trim();
}

const wants = (t: TriggerOptionsView, e: TriggerEvent) => t.events.includes(e);

/** A request for a CI follow-up: "fix the CI" (or the checks, the build, the pipeline), first in the request. */
const FIX_CI = /^(?:please\s+)?(?:fix|repair)\s+(?:the\s+)?(?:ci|checks?|build|pipeline)\b/i;
export const asksForCi = (request: string) => FIX_CI.test(request.trim());

/** Why a CI delivery that is not a failure starts nothing. */
const NOT_FAILED = {
  pending: 'a check still running starts nothing',
  passed: 'a passing check starts nothing',
  cancelled: 'a cancelled check starts nothing',
} as const;

/**
 * The key that makes a second delivery of the same thing recognisable when the host gives it a new
 * id (Gitea's redelivery): the comment or the review. Labels have none (see docs/triggers.md).
 */
export function eventKey(e: HostEvent): string | null {
  if (e.kind === 'comment' || e.kind === 'line_comment') return `${e.kind}:${e.comment.id}:${e.action}`;
  // GitLab and Gitea give a review no id (''): such reviews have no key, only their delivery id.
  if (e.kind === 'review') return e.review.id ? `review:${e.review.id}` : null;
  return null;
}

export function decide(t: TriggerOptionsView, e: HostEvent): Decision {
  const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
  if (!same(e.repo.owner, t.repoOwner) || !same(e.repo.name, t.repoName))
    return { ignored: `the delivery is about ${e.repo.owner}/${e.repo.name}, not ${t.repoOwner}/${t.repoName}` };
  switch (e.kind) {
    case 'comment':
    case 'line_comment': {
      if (e.action !== 'created') return { ignored: `a comment ${e.action} starts nothing` };
      if (e.comment.body.includes(MARKER)) return { ignored: "emend's own comment" };
      const needs: TriggerEvent = e.kind === 'comment' ? 'comments' : 'reviews';
      if (!wants(t, needs)) return { ignored: `${needs} are not among the trigger’s events` };
      if (!mentions(e.comment.body, t.mention)) return { ignored: `the comment does not mention ${t.mention}` };
      const request = requestAfterMention(e.comment.body, t.mention);
      if (e.thread.kind === 'issue') return { act: 'issue_task', request };
      if (e.kind === 'comment' && asksForCi(request)) return { act: 'ci_round', manual: true, request };
      return { act: 'follow_up', request };
    }
    case 'labeled': {
      if (!wants(t, 'labels')) return { ignored: 'labels are not among the trigger’s events' };
      if (!same(e.label, t.label) && !(e.labels ?? []).some((l) => same(l, t.label)))
        return { ignored: `the label added is not ${t.label}` };
      if (e.thread.kind !== 'issue') return { ignored: 'the label starts tasks on issues, not on pull requests' };
      return { act: 'issue_task', request: '' };
    }
    case 'review': {
      if (!wants(t, 'reviews')) return { ignored: 'reviews are not among the trigger’s events' };
      // An approval asks for nothing; a review requesting changes or commenting does, when it mentions emend
      // (Gitea delivers a line comment as a commenting review, with the comment's text as its body).
      if (e.review.state === 'approved') return { ignored: 'an approving review starts nothing' };
      if (e.review.body.includes(MARKER)) return { ignored: "emend's own review" };
      if (!mentions(e.review.body, t.mention)) return { ignored: `the review does not mention ${t.mention}` };
      return { act: 'follow_up', request: requestAfterMention(e.review.body, t.mention) };
    }
    case 'ci': {
      if (e.ci.state !== 'failed') return { ignored: NOT_FAILED[e.ci.state] };
      if (t.ciRounds <= 0) return { ignored: 'automatic CI follow-ups are off for the repository (ci_rounds 0)' };
      return { act: 'ci_round', manual: false, request: '' };
    }
  }
}
