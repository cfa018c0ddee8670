import { and, desc, eq, isNotNull, sql } from 'drizzle-orm';
import { type TaskTrigger, tasks, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import type { CodeHost, ReactionTarget, ThreadRef } from '../scm/code-host.js';
import type { HostEvent } from '../scm/host-events.js';
import type { ScmHost } from '../scm/hosts.js';
import { pullOfUrl } from '../tasks/merge-tracking.js';
import { countTaskPost } from '../tasks/rate-limit.js';
import { createTask } from '../tasks/service.js';
import { ThreadTaskActive, activeOnThread } from '../tasks/lifecycle/one-per-thread.js';
import type { Task } from '../tasks/task.js';
import { answerBody, postAnswer, taskLink } from './answer.js';
import type { RepoTrigger } from './repo-triggers.js';

/**
 * What the trigger job's acts share (act.ts for mentions, labels and reviews, ci-round.ts for
 * failing checks): the thread a delivery is about, replying there, the task already active on it,
 * the pull request's opening task, and starting a task as an API task is started (rate limit,
 * quota, credit, concurrency), owned by the account that enabled the repository, every refusal a
 * reply in plain words.
 */

export type ActDeps = Pick<
  Deps,
  'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'log' | 'queue' | 'metrics' | 'appTokens'
>;

/** The delivery's outcome, recorded on its row. */
export type Outcome = { status: 'ignored' | 'answered' | 'failed'; reason: string } | { status: 'started'; task: Task };

/** A delivery being acted on: its trigger, host, client (as the enabling account or the app) and event. */
export interface Acting {
  deps: ActDeps;
  trigger: RepoTrigger;
  host: ScmHost;
  client: CodeHost;
  event: HostEvent;
}

/** …and the issue or pull request it is about. */
export interface Context extends Acting {
  thread: ThreadRef;
}

/** A comment in the thread, marked as emend's so that its delivery is ignored. */
export async function reply(c: Context, text: string) {
  await c.client.comment(c.trigger.repoOwner, c.trigger.repoName, c.thread, answerBody(text));
}

/** The task already active on this thread, if any: a cheap early look that saves the host calls (start() looks again, atomically). */
export function runningOn(c: Context, thread: 'issue' | 'pull'): Promise<Task | undefined> {
  return activeOnThread(c.deps.db, {
    workspaceId: c.trigger.workspaceId,
    host: c.host.id,
    repoOwner: c.trigger.repoOwner,
    repoName: c.trigger.repoName,
    thread,
    number: c.thread.number,
  });
}

/** The answer to a second asker while a task is active on the thread: that task's link, and nothing started or charged. */
export async function alreadyWorking(c: Context, running: Task, thread: 'issue' | 'pull'): Promise<Outcome> {
  const what = thread === 'issue' ? 'issue' : 'pull request';
  await reply(
    c,
    `@${c.event.actor.login} emend is already working on this ${what}: ${taskLink(c.deps.config, running.id)}`,
  );
  return { status: 'answered', reason: `task ${running.id} is already running on the ${what}` };
}

const PLAIN: Partial<Record<AppError['code'], string>> = {
  NO_CREDITS: 'the account that enabled emend here has no credits left',
  FREE_LIMIT_REACHED: "this month's tasks on its plan are used up",
  CONCURRENT_LIMIT: 'it already runs as many tasks at once as its plan allows; ask again when one has finished',
  PRIVATE_REPO_REQUIRES_UPGRADE: 'its plan works on public repositories only',
  scm_not_connected: 'its connection to the code host no longer works',
  model_not_configured: 'no model provider key is set for it (Account → Provider keys)',
};

/** A refusal of task creation, said in the thread in plain words. */
function refusalText(err: AppError): string {
  if (err.code === 'rate_limited')
    return `too many tasks were asked for in the last minute; ask again in ${err.retryAfterSeconds ?? 60} s`;
  return PLAIN[err.code] ?? err.message;
}

/** What a task started from the thread is: its prompt, branch, the task it follows up, who asked and how. */
export interface Start {
  prompt: string;
  baseBranch: string;
  followUpOf?: string;
  trigger: TaskTrigger;
  /** What gets the 👀 reaction (the comment that asked, or the thread); none for a failing check. */
  reactOn?: ReactionTarget;
  /**
   * Nobody asked (a failing check): a refusal is still said in the thread, to nobody in
   * particular, and a task already active there is no reason to say anything.
   */
  unasked?: boolean;
}

/** Creates the task in the enabling workspace, or says in the thread why not. */
export async function start(c: Context, input: Start): Promise<Outcome> {
  const thread = input.trigger.thread;
  const [workspace] = await c.deps.db.select().from(workspaces).where(eq(workspaces.id, c.trigger.workspaceId));
  if (!workspace || workspace.deletedAt) return { status: 'ignored', reason: 'the enabling workspace is gone' };
  let task: Task;
  try {
    await countTaskPost(c.deps, workspace.id);
    task = await createTask(
      c.deps,
      { workspace, account: null, tokenId: null, tokenKind: 'full' },
      {
        prompt: input.prompt,
        repo_url: `${c.host.webUrl.replace(/\/+$/, '')}/${c.trigger.repoOwner}/${c.trigger.repoName}`,
        base_branch: input.baseBranch,
      },
      { trigger: input.trigger, ...(input.followUpOf ? { followUpOf: input.followUpOf } : {}) },
    );
  } catch (err) {
    // Another delivery on the thread started its task since the early look.
    if (err instanceof ThreadTaskActive)
      return input.unasked
        ? { status: 'ignored', reason: `task ${err.task.id} is already working on the pull request` }
        : alreadyWorking(c, err.task, thread);
    if (!(err instanceof AppError)) throw err;
    const to = input.unasked ? '' : `@${c.event.actor.login} `;
    await reply(c, `${to}emend cannot start on this: ${refusalText(err)}.`);
    return { status: 'answered', reason: `${err.code}: ${err.message}` };
  }
  c.deps.metrics.tasksCreated.inc({ task_type: task.taskType, mode: task.mode });
  // Answers are courtesy: the task runs whether or not the host takes them. The first answer is
  // posted before the task is queued, so a task that ends at once edits it rather than posting a
  // second one (a pending task never queued is queued again by the workers' maintenance).
  if (input.reactOn)
    await c.client.react(c.trigger.repoOwner, c.trigger.repoName, input.reactOn, 'eyes').catch((err) => {
      c.deps.log.warn({ err, task: task.id }, 'reaction not added');
    });
  await postAnswer(c.deps, c.client, c.trigger, task).catch((err) => {
    c.deps.log.warn({ err, task: task.id }, 'answer comment not posted');
  });
  await c.deps.queue.enqueue(task.id);
  return { status: 'started', task };
}

/**
 * The pull requests emend opened on the repository for the enabling workspace, each with the task
 * that opened it (a follow-up carries its pull request's URL too: the first task, no follow-up
 * parent, is the opener).
 */
export async function emendPulls(c: Acting): Promise<{ number: number; opener: Task }[]> {
  const candidates = await c.deps.db
    .select()
    .from(tasks)
    .where(
      and(
        eq(tasks.workspaceId, c.trigger.workspaceId),
        isNotNull(tasks.prUrl),
        sql`lower(${tasks.repoOwner}) = ${c.trigger.repoOwner.toLowerCase()}`,
        sql`lower(${tasks.repoName}) = ${c.trigger.repoName.toLowerCase()}`,
      ),
    )
    .orderBy(desc(tasks.createdAt));
  const byNumber = new Map<number, Task[]>();
  for (const t of candidates) {
    const pull = pullOfUrl(c.deps.config, t.prUrl!);
    if (!pull || pull.host.id !== c.host.id) continue;
    byNumber.set(pull.number, [...(byNumber.get(pull.number) ?? []), t]);
  }
  return [...byNumber].map(([number, ts]) => ({
    number,
    opener: [...ts].reverse().find((t) => t.trigger?.thread !== 'pull') ?? ts.at(-1)!,
  }));
}

/** The task that opened pull request `number`, when emend opened it for the enabling account. */
export async function openedBy(c: Acting, number: number): Promise<Task | undefined> {
  return (await emendPulls(c)).find((p) => p.number === number)?.opener;
}
