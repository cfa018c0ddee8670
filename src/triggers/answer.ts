import { eq } from 'drizzle-orm';
import { hostFor } from '../workspaces/scm-connection.js';
import { repoCredential } from '../workspaces/repo-credential.js';
import type { Config } from '../config/config.js';
import { repoTriggers, tasks } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { CodeHost } from '../scm/code-host.js';
import { hostById } from '../scm/hosts.js';
import type { Task } from '../tasks/task.js';
import { parseFixOutputs, readProgress } from '../step-contract/index.js';
import { MARKER } from './decide.js';
import { ciReproduction } from './ci-reproduction.js';
import type { RepoTrigger } from './repo-triggers.js';

/**
 * emend's answer in the thread of a task asked for on the code host: one comment, posted when the
 * task is created and edited in place as it goes (the panel link; then the pull request, the
 * failure in one sentence, or "stopped"). Every comment emend writes starts with the marker,
 * so its own deliveries are ignored.
 */

export const answerBody = (text: string) => `${MARKER}\n${text}`;

/** The task's page in the panel. */
export const taskLink = (config: Pick<Config, 'baseUrl'>, id: string) =>
  `${config.baseUrl.replace(/\/+$/, '')}/app/tasks/${id}`;

/** The first sentence of a failure, for the thread (the panel has the rest). */
function firstSentence(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  const m = /^(.{10,}?[.!?])(\s|$)/.exec(line);
  const s = m ? m[1]! : line;
  return s.length > 300 ? `${s.slice(0, 299)}…` : s;
}

/** What the CI follow-up was started for, in a line: the commit, the jobs and their steps, the round. */
function ciWhat(ci: NonNullable<NonNullable<Task['trigger']>['ci']>): string {
  const jobs = ci.jobs.map((j) => `\`${j.name}\`${j.step ? ` (step \`${j.step}\`)` : ''}`).join(', ');
  const round = ci.round === null ? 'asked for by hand' : `automatic round ${ci.round}`;
  return `CI failed on ${ci.sha.slice(0, 7)}: ${jobs}; ${round}`;
}

/** What the answer says for the task as it is now. */
export function answerText(config: Pick<Config, 'baseUrl'>, task: Task): string {
  const link = taskLink(config, task.id);
  const t = task.trigger!;
  const followUp = t.thread === 'pull';
  if (t.ci && (task.status === 'pending' || task.status === 'running'))
    return `${ciWhat(t.ci)}. emend is working on a fix: ${link}`;
  switch (task.status) {
    case 'done':
      if (t.ci) {
        const validator = parseFixOutputs(readProgress(task.progress).outputs).validator;
        return `emend pushed a fix for the failing CI to this pull request (${ciWhat(t.ci)}). ${ciReproduction(t.ci, validator)} Details: ${link}`;
      }
      if (followUp) return `emend pushed its follow-up to this pull request. Details: ${link}`;
      if (task.prUrl) return `emend opened ${task.prUrl}; merging it closes this issue. Details: ${link}`;
      return `emend prepared a change as a preview (no pull request on this plan): ${link}`;
    case 'failed':
      return `emend could not finish: ${firstSentence(task.error ?? 'the task failed')} Details: ${link}`;
    case 'cancelled':
      return `emend stopped (the task was cancelled). Details: ${link}`;
    case 'awaiting_plan':
    case 'awaiting_diff':
      return `emend is waiting for approval in the panel: ${link}`;
    default:
      return `emend is working on this: ${link}`;
  }
}

type AnswerDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'log' | 'appTokens'>;

/** Posts the task's first answer and remembers its id on the task. */
export async function postAnswer(deps: AnswerDeps, client: CodeHost, trigger: RepoTrigger, task: Task): Promise<void> {
  const t = task.trigger!;
  const posted = await client.comment(
    trigger.repoOwner,
    trigger.repoName,
    { kind: t.thread, number: t.number },
    answerBody(answerText(deps.config, task)),
  );
  await deps.db
    .update(tasks)
    .set({ trigger: { ...t, answerId: posted.id, answered: task.status } })
    .where(eq(tasks.id, task.id));
}

/**
 * Brings the task's answer up to date (the `answer` trigger job, queued when a triggered task
 * ends): edits the comment when its status changed since it was written, posts one when none was.
 */
export async function refreshAnswer(deps: AnswerDeps, taskId: string): Promise<void> {
  const [task] = await deps.db.select().from(tasks).where(eq(tasks.id, taskId));
  const t = task?.trigger;
  if (!task || !t || t.answered === task.status) return;
  const [trigger] = await deps.db.select().from(repoTriggers).where(eq(repoTriggers.id, t.triggerId));
  const host = hostById(deps.config, t.host);
  if (!trigger || !host) return;
  const { token } = await repoCredential(deps, trigger.workspaceId, host, {
    owner: trigger.repoOwner,
    name: trigger.repoName,
  });
  if (!token) return;
  const client = hostFor(deps, host, token);
  const thread = { kind: t.thread, number: t.number };
  const body = answerBody(answerText(deps.config, task));
  let answerId = t.answerId;
  if (answerId) await client.editComment(trigger.repoOwner, trigger.repoName, thread, answerId, body);
  else answerId = (await client.comment(trigger.repoOwner, trigger.repoName, thread, body)).id;
  await deps.db
    .update(tasks)
    .set({ trigger: { ...t, answerId, answered: task.status } })
    .where(eq(tasks.id, task.id));
}
