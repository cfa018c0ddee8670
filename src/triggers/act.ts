import { and, eq, inArray, isNotNull, or, sql } from 'drizzle-orm';
import { hostFor } from '../workspaces/scm-connection.js';
import { repoCredential } from '../workspaces/repo-credential.js';
import { type TaskTrigger, repoTriggers, tasks, triggerDeliveries, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import type { CodeHost, ReactionTarget, ScmLineComment, ThreadRef } from '../scm/code-host.js';
import type { HostEvent } from '../scm/host-events.js';
import { type ScmHost, hostById } from '../scm/hosts.js';
import { pullOfUrl } from '../tasks/merge-tracking.js';
import { countTaskPost } from '../tasks/rate-limit.js';
import { createTask } from '../tasks/service.js';
import { ThreadTaskActive, activeOnThread } from '../tasks/lifecycle/one-per-thread.js';
import type { Task } from '../tasks/task.js';
import { branchName } from '../tasks/branch-name.js';
import { type Decision, decide } from './decide.js';
import { followUpPrompt, issuePrompt } from './prompt.js';
import type { RepoTrigger } from './repo-triggers.js';
import { answerBody, postAnswer, taskLink } from './answer.js';

/**
 * The trigger job (queue `emend-triggers`): acts on one recorded delivery. The person's write
 * permission is asked of the host before anything is charged; the task is created as an API
 * task is (rate limit, quota, credit, concurrency), owned by the account that enabled the
 * repository; every refusal becomes a reply in the thread, in plain words.
 */

type ActDeps = Pick<
  Deps,
  'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'log' | 'queue' | 'metrics' | 'appTokens'
>;

/** How many of the thread's earlier comments the prompt may quote. */
const CONTEXT_COMMENTS = 10;
/** How many line comments a follow-up quotes at most when no review names them. */
const REVIEW_LINES = 10;

/** The delivery's outcome, recorded on its row. */
type Outcome = { status: 'ignored' | 'answered' | 'failed'; reason: string } | { status: 'started'; task: Task };

export async function actOnDelivery(deps: ActDeps, deliveryRowId: string): Promise<void> {
  // Claimed by one job: a second job for the same row (a sweep racing the queue) finds it taken.
  const [row] = await deps.db
    .update(triggerDeliveries)
    .set({ status: 'acting' })
    .where(and(eq(triggerDeliveries.id, deliveryRowId), eq(triggerDeliveries.status, 'received')))
    .returning();
  if (!row) return;
  let outcome: Outcome;
  try {
    outcome = await act(deps, row);
  } catch (err) {
    deps.log.warn({ err, delivery: row.deliveryId }, 'trigger delivery failed');
    outcome = { status: 'failed', reason: err instanceof Error ? err.message : String(err) };
  }
  await deps.db
    .update(triggerDeliveries)
    .set({
      status: outcome.status,
      reason: 'reason' in outcome ? outcome.reason.slice(0, 500) : null,
      taskId: 'task' in outcome ? outcome.task.id : null,
      payload: null,
      doneAt: deps.clock.now(),
    })
    .where(eq(triggerDeliveries.id, row.id));
}

interface Context {
  deps: ActDeps;
  trigger: RepoTrigger;
  host: ScmHost;
  client: CodeHost;
  event: HostEvent;
  thread: ThreadRef;
}

async function act(deps: ActDeps, row: typeof triggerDeliveries.$inferSelect): Promise<Outcome> {
  const [trigger] = await deps.db.select().from(repoTriggers).where(eq(repoTriggers.id, row.triggerId));
  if (!trigger) return { status: 'ignored', reason: 'triggers were turned off for the repository' };
  const host = hostById(deps.config, trigger.host);
  if (!host) return { status: 'ignored', reason: `the host ${trigger.host} is no longer configured` };
  const read = host.kind.readEvent(row.event, row.payload);
  if ('ignored' in read) return { status: 'ignored', reason: read.ignored };
  const decision = decide(trigger, read);
  if ('ignored' in decision) return { status: 'ignored', reason: decision.ignored };
  // The app's installation token where the workspace installed it (the asker's permission is asked with it too).
  const { token } = await repoCredential(deps, trigger.workspaceId, host, {
    owner: trigger.repoOwner,
    name: trigger.repoName,
  });
  if (!token) return { status: 'failed', reason: 'the enabling account is no longer connected to the host' };
  const client = hostFor(deps, host, token);
  const c: Context = { deps, trigger, host, client, event: read, thread: read.thread };

  const permission = await client.permission(trigger.repoOwner, trigger.repoName, read.actor);
  if (permission !== 'write') {
    await reply(
      c,
      `@${read.actor.login} emend takes requests from people who can write to this repository; ask one of them to mention ${trigger.mention}.`,
    );
    return { status: 'answered', reason: `${read.actor.login} may not write to the repository` };
  }
  return decision.act === 'issue_task' ? issueTask(c, decision) : followUp(c, decision);
}

/** A comment in the thread, marked as emend's so that its delivery is ignored. */
async function reply(c: Context, text: string) {
  await c.client.comment(c.trigger.repoOwner, c.trigger.repoName, c.thread, answerBody(text));
}

/** What the person did, as a reaction target: their comment, or the thread for a label or a review. */
function reactionTarget(c: Context): ReactionTarget {
  const e = c.event;
  if (e.kind === 'comment') return { on: 'comment', thread: c.thread, commentId: e.comment.id };
  if (e.kind === 'line_comment') return { on: 'line_comment', thread: c.thread, commentId: e.comment.id };
  return { on: 'thread', thread: c.thread };
}

/** The task already active on this thread, if any: a cheap early look that saves the host calls (start() looks again, atomically). */
function runningOn(c: Context, thread: 'issue' | 'pull'): Promise<Task | undefined> {
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
async function alreadyWorking(c: Context, running: Task, thread: 'issue' | 'pull'): Promise<Outcome> {
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

function triggerOf(c: Context, thread: 'issue' | 'pull'): TaskTrigger {
  const e = c.event;
  const kind: TaskTrigger['kind'] = e.kind === 'labeled' ? 'label' : e.kind;
  const commentUrl =
    e.kind === 'comment' || e.kind === 'line_comment'
      ? e.comment.url
      : e.kind === 'review'
        ? e.review.url
        : e.thread.url;
  return {
    host: c.host.id,
    kind,
    thread,
    number: e.thread.number,
    commentUrl,
    actor: e.actor.login,
    triggerId: c.trigger.id,
  };
}

/** Creates the task in the enabling workspace, or says in the thread why not. */
async function start(
  c: Context,
  input: { prompt: string; baseBranch: string; followUpOf?: string; thread: 'issue' | 'pull' },
): Promise<Outcome> {
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
      { trigger: triggerOf(c, input.thread), ...(input.followUpOf ? { followUpOf: input.followUpOf } : {}) },
    );
  } catch (err) {
    // Another delivery on the thread started its task since the early look.
    if (err instanceof ThreadTaskActive) return alreadyWorking(c, err.task, input.thread);
    if (!(err instanceof AppError)) throw err;
    await reply(c, `@${c.event.actor.login} emend cannot start on this: ${refusalText(err)}.`);
    return { status: 'answered', reason: `${err.code}: ${err.message}` };
  }
  c.deps.metrics.tasksCreated.inc({ task_type: task.taskType, mode: task.mode });
  // Answers are courtesy: the task runs whether or not the host takes them. The first answer is
  // posted before the task is queued, so a task that ends at once edits it rather than posting a
  // second one (a pending task never queued is queued again by the workers' maintenance).
  await c.client.react(c.trigger.repoOwner, c.trigger.repoName, reactionTarget(c), 'eyes').catch((err) => {
    c.deps.log.warn({ err, task: task.id }, 'reaction not added');
  });
  await postAnswer(c.deps, c.client, c.trigger, task).catch((err) => {
    c.deps.log.warn({ err, task: task.id }, 'answer comment not posted');
  });
  await c.deps.queue.enqueue(task.id);
  return { status: 'started', task };
}

async function issueTask(c: Context, d: Extract<Decision, { act: 'issue_task' }>): Promise<Outcome> {
  const running = await runningOn(c, 'issue');
  if (running) return alreadyWorking(c, running, 'issue');
  const repo = await c.client.repo(c.trigger.repoOwner, c.trigger.repoName);
  if (!repo) return { status: 'failed', reason: 'the repository is no longer visible to the enabling account' };
  const earlier = (
    await c.client.comments(c.trigger.repoOwner, c.trigger.repoName, c.thread, CONTEXT_COMMENTS + 1)
  ).filter((x) => c.event.kind !== 'comment' || x.id !== c.event.comment.id);
  const prompt = issuePrompt(c.event.thread, d.request, earlier.slice(-CONTEXT_COMMENTS));
  return start(c, { prompt, baseBranch: repo.defaultBranch, thread: 'issue' });
}

/** The task that opened this pull request, when emend opened it for the enabling account. */
async function openedBy(c: Context): Promise<Task | undefined> {
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
    );
  // A follow-up carries its pull request's URL too: the first task (no follow-up parent) is the opener.
  const opened = candidates.filter((t) => {
    const pull = pullOfUrl(c.deps.config, t.prUrl!);
    return pull?.number === c.thread.number && pull.host.id === c.host.id;
  });
  return opened.find((t) => t.trigger?.thread !== 'pull') ?? opened[0];
}

/**
 * The asker's line comments on the pull request since emend last finished work on it: what a
 * mention in the conversation (GitLab publishes a review's text as a note) or a review without an
 * id (GitLab, Gitea) refers to.
 */
async function linesSinceLastPush(c: Context, opener: Task): Promise<ScmLineComment[]> {
  const runs = await c.deps.db
    .select({ finishedAt: tasks.finishedAt })
    .from(tasks)
    .where(or(eq(tasks.id, opener.id), eq(tasks.parentId, opener.id)));
  const since = Math.max(0, ...runs.map((r) => r.finishedAt?.getTime() ?? 0));
  const asker = c.event.actor.login.toLowerCase();
  return (await c.client.lineComments(c.trigger.repoOwner, c.trigger.repoName, c.thread.number))
    .filter((l) => l.author.toLowerCase() === asker && l.createdAt.getTime() >= since)
    .slice(-REVIEW_LINES);
}

async function followUp(c: Context, d: Extract<Decision, { act: 'follow_up' }>): Promise<Outcome> {
  const opener = await openedBy(c);
  if (!opener) return { status: 'ignored', reason: 'not a pull request emend opened' };
  const running = await runningOn(c, 'pull');
  if (running) return alreadyWorking(c, running, 'pull');
  const head = c.event.thread.headRepo;
  if (
    head &&
    (head.owner.toLowerCase() !== c.trigger.repoOwner.toLowerCase() ||
      head.name.toLowerCase() !== c.trigger.repoName.toLowerCase())
  ) {
    await reply(
      c,
      `@${c.event.actor.login} this pull request's branch is in a fork; emend follows up only on branches of this repository.`,
    );
    return { status: 'answered', reason: 'the pull request comes from a fork' };
  }
  const branch = c.event.thread.headBranch ?? branchName(opener);
  const e = c.event;
  let lines: Pick<ScmLineComment, 'path' | 'line' | 'body' | 'author'>[] = [];
  if (e.kind === 'line_comment')
    lines = [{ path: e.comment.path ?? '', line: e.comment.line ?? null, body: d.request, author: e.actor.login }];
  else if (e.kind === 'review' && e.review.id)
    lines = await c.client.lineComments(c.trigger.repoOwner, c.trigger.repoName, c.thread.number, e.review.id);
  else lines = await linesSinceLastPush(c, opener);
  const prompt = followUpPrompt(e.thread, d.request, lines);
  return start(c, { prompt, baseBranch: branch, followUpOf: opener.id, thread: 'pull' });
}
