import type { HookEvent, NewHook } from '../code-host.js';

/**
 * Gitea's hook events for each of emend's: a comment on a pull request is its own event beside an
 * issue's; `issues` takes every issue event (labels included); `pull_request_review` takes the
 * reviews (approved, changes requested, commented), whose line comments come with them; a
 * commit's checks are its statuses and, where the host has Actions (1.24 and later), its workflow
 * runs and jobs (an older host ignores the names it does not know).
 */
const HOOK_EVENTS: Record<HookEvent, string[]> = {
  issue_comment: ['issue_comment', 'pull_request_comment'],
  issues: ['issues'],
  pull_request_review: ['pull_request_review'],
  pull_request_review_comment: ['pull_request_review'],
  ci: ['status', 'workflow_run', 'workflow_job'],
};

/** A `gitea` hook (Gitea's own payloads and signature), JSON bodies, the secret in its config: a repository's or an organisation's. */
export const hookBody = (hook: NewHook) => ({
  type: 'gitea',
  config: { url: hook.url, content_type: 'json', secret: hook.secret },
  events: [...new Set(hook.events.flatMap((e) => HOOK_EVENTS[e]))],
  active: true,
});
