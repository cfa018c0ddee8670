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

/** A failing CI job as a CI follow-up's prompt shows it. */
export interface FailingJob {
  name: string;
  /** What ran it ("GitHub Actions", "a commit status"). */
  source: string;
  step?: string;
  /** The host's one line about it (a status's description). */
  summary?: string;
  url: string | null;
  /** The failing step's tail (ci-log.ts), or null when the host keeps no log of it. */
  tail: string | null;
  tests: string[];
}

/** `text` cut to its last `max` characters, marked where it was cut (a log is read from its end). */
const lastOf = (text: string, max: number) => (text.length <= max ? text : `…${text.slice(text.length - max + 1)}`);

/**
 * A CI follow-up's prompt (docs/triggers.md, "CI follow-ups"), within the task's prompt limit:
 * what failed first (each job, its step, the failing tests), then the person's request when one
 * asked, then each job's log tail sharing what is left, each keeping its end.
 */
export function ciPrompt(
  pull: { number: number; title: string },
  sha: string,
  jobs: FailingJob[],
  request: string,
): string {
  const head = [
    `Follow-up on pull request #${pull.number} (${pull.title}): its CI failed on ${sha.slice(0, 7)}. Change its branch so that the failing checks pass.`,
    ...jobs.map((j) => {
      const where = [j.step ? `step "${j.step}"` : '', j.summary ? `"${clip(j.summary, 120)}"` : '']
        .filter(Boolean)
        .join(', ');
      const tests = j.tests.length ? `; failing tests: ${j.tests.slice(0, 8).join(', ')}` : '';
      return `- ${j.name} (${j.source})${where ? `: ${where}` : ''}${tests}`;
    }),
  ].join('\n');
  const asked = request ? `Request: ${clip(request, 300)}` : '';
  const logged = jobs.filter((j) => j.tail);
  const unlogged = jobs.filter((j) => !j.tail && j.url).map((j) => `${j.name}: no log through the API (${j.url})`);
  const fixed = [clip(head, 900), asked, ...unlogged].filter(Boolean);
  const used = fixed.reduce((n, p) => n + [...p].length + 2, 0);
  const share = Math.floor((PROMPT_LIMITS.max - used) / Math.max(1, logged.length)) - 30;
  const logs = share >= 80 ? logged.map((j) => `Log of ${j.name}, its end:\n${lastOf(j.tail!, share)}`) : [];
  return within([...fixed, ...logs]);
}
