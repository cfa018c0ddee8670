import type { ScmComment, ScmLineComment } from '../scm/code-host.js';
import type { EventThread } from '../scm/host-events.js';
import { PROMPT_LIMITS } from '../tasks/service.js';
import { MARKER } from './decide.js';

/**
 * The prompt of a task asked for on the code host, within the task's prompt limit: the request
 * first (the words after the mention: what the person asked now), then the issue, then the
 * thread's earlier comments as context, newest kept, each clipped. The parts are clipped in that
 * order of importance, so a long issue never pushes the request out.
 */

const COMMENT_CHARS = 400;
const clip = (text: string, max: number) => {
  const t = text.trim();
  return t.length <= max ? t : `${t.slice(0, max - 1).trimEnd()}…`;
};

/** Joins parts into at most the prompt limit: each part gets what the ones before it left. */
function within(parts: string[]): string {
  let left = PROMPT_LIMITS.max;
  const kept: string[] = [];
  for (const p of parts) {
    if (left < 40) break;
    const c = clip(p, left);
    kept.push(c);
    left -= [...c].length + 2;
  }
  return kept.join('\n\n');
}

/** Earlier comments of the thread, without emend's own (its answers say nothing about the code). */
const context = (comments: ScmComment[]) =>
  comments
    .filter((c) => !c.body.includes(MARKER))
    .map((c) => `@${c.author}: ${clip(c.body, COMMENT_CHARS)}`)
    .join('\n');

export function issuePrompt(thread: EventThread, request: string, earlier: ScmComment[]): string {
  const history = context(earlier);
  return within([
    ...(request ? [`Request: ${request}`] : []),
    `Issue #${thread.number}: ${thread.title}\n\n${thread.body || '(no description)'}`,
    ...(history ? [`Earlier comments, oldest first:\n${history}`] : []),
  ]);
}

export function followUpPrompt(
  thread: EventThread,
  request: string,
  lines: Pick<ScmLineComment, 'path' | 'line' | 'body' | 'author'>[],
): string {
  const review = lines
    .filter((c) => !c.body.includes(MARKER))
    .map((c) => `- ${c.path}${c.line === null ? '' : `:${c.line}`} (@${c.author}): ${clip(c.body, COMMENT_CHARS)}`)
    .join('\n');
  return within([
    `Follow-up on pull request #${thread.number} (${thread.title}): change its branch as the review asks.`,
    ...(request ? [`Request: ${request}`] : []),
    ...(review ? [`Review comments on lines:\n${review}`] : []),
  ]);
}
