import type { HookEvent, NewHook } from '../code-host.js';

/**
 * The project hook's switch for each of emend's events: GitLab's notes are the comments on issues
 * and merge requests, lines of a diff included; a review's approval or request for changes is a
 * merge request event, its comments notes; a commit's checks are its pipelines.
 */
const HOOK_SWITCHES: Record<HookEvent, ('noteEvents' | 'issuesEvents' | 'mergeRequestsEvents' | 'pipelineEvents')[]> = {
  issue_comment: ['noteEvents'],
  issues: ['issuesEvents'],
  pull_request_review: ['mergeRequestsEvents', 'noteEvents'],
  pull_request_review_comment: ['noteEvents'],
  ci: ['pipelineEvents'],
};

/** The hook's options: every switch off but those the events need (GitLab turns push events on unless told). */
export function hookOptions(hook: NewHook) {
  const on = new Set(hook.events.flatMap((e) => HOOK_SWITCHES[e]));
  return {
    token: hook.secret,
    pushEvents: false,
    issuesEvents: on.has('issuesEvents'),
    noteEvents: on.has('noteEvents'),
    mergeRequestsEvents: on.has('mergeRequestsEvents'),
    pipelineEvents: on.has('pipelineEvents'),
    enableSslVerification: true,
  };
}
