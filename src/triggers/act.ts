import { and, eq, or } from 'drizzle-orm';
import { hostFor } from '../workspaces/scm-connection.js';
import { repoCredential } from '../workspaces/repo-credential.js';
import { type TaskTrigger, repoTriggers, tasks, triggerDeliveries } from '../db/schema.js';
import type { ReactionTarget, ScmLineComment } from '../scm/code-host.js';
import type { ThreadEvent } from '../scm/host-events.js';
import { hostById } from '../scm/hosts.js';
import type { Task } from '../tasks/task.js';
import { branchName } from '../tasks/branch-name.js';
import { type Decision, decide } from './decide.js';
import { followUpPrompt, issuePrompt } from './prompt.js';
import { askedCiRound, ciRound } from './ci-round.js';
import {
  type ActDeps,
  type Context,
  type Outcome,
  alreadyWorking,
  openedBy,
  reply,
  runningOn,
  start,
} from './thread-task.js';

/**
 * The trigger job (queue `emend-triggers`): acts on one recorded delivery. The person's write
 * permission is asked of the host before anything is charged; the task is created as an API
 * task is (rate limit, quota, credit, concurrency), owned by the account that enabled the
 * repository; every refusal becomes a reply in the thread, in plain words.
 */

/** How many of the thread's earlier comments the prompt may quote. */
const CONTEXT_COMMENTS = 10;
/** How many line comments a follow-up quotes at most when no review names them. */
const REVIEW_LINES = 10;

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
  // A failing check asks nobody's permission: the account that turned triggers on asked for these rounds.
  if (read.kind === 'ci') return ciRound({ deps, trigger, host, client, event: read }, read, [token]);
  const c: Context = { deps, trigger, host, client, event: read, thread: read.thread };

  const permission = await client.permission(trigger.repoOwner, trigger.repoName, read.actor);
  if (permission !== 'write') {
    await reply(
      c,
      `@${read.actor.login} emend takes requests from people who can write to this repository; ask one of them to mention ${trigger.mention}.`,
    );
    return { status: 'answered', reason: `${read.actor.login} may not write to the repository` };
  }
  if (decision.act === 'issue_task') return issueTask(c, read, decision);
  if (decision.act === 'ci_round') return askedCiRound(c, decision.request);
  return followUp(c, read, decision);
}

/** What the person did, as a reaction target: their comment, or the thread for a label or a review. */
function reactionTarget(c: Context, e: ThreadEvent): ReactionTarget {
  if (e.kind === 'comment') return { on: 'comment', thread: c.thread, commentId: e.comment.id };
  if (e.kind === 'line_comment') return { on: 'line_comment', thread: c.thread, commentId: e.comment.id };
  return { on: 'thread', thread: c.thread };
}

function triggerOf(c: Context, e: ThreadEvent, thread: 'issue' | 'pull'): TaskTrigger {
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

/** A task asked for by a person in the thread: the 👀 on what they did, their name on the task. */
const asked = (c: Context, e: ThreadEvent, thread: 'issue' | 'pull') => ({
  trigger: triggerOf(c, e, thread),
  reactOn: reactionTarget(c, e),
});

async function issueTask(c: Context, e: ThreadEvent, d: Extract<Decision, { act: 'issue_task' }>): Promise<Outcome> {
  const running = await runningOn(c, 'issue');
  if (running) return alreadyWorking(c, running, 'issue');
  const repo = await c.client.repo(c.trigger.repoOwner, c.trigger.repoName);
  if (!repo) return { status: 'failed', reason: 'the repository is no longer visible to the enabling account' };
  const earlier = (
    await c.client.comments(c.trigger.repoOwner, c.trigger.repoName, c.thread, CONTEXT_COMMENTS + 1)
  ).filter((x) => e.kind !== 'comment' || x.id !== e.comment.id);
  const prompt = issuePrompt(e.thread, d.request, earlier.slice(-CONTEXT_COMMENTS));
  return start(c, { prompt, baseBranch: repo.defaultBranch, ...asked(c, e, 'issue') });
}

/**
 * The asker's line comments on the pull request since emend last finished work on it: what a
 * mention in the conversation (GitLab publishes a review's text as a note) or a review without an
 * id (GitLab, Gitea) refers to.
 */
async function linesSinceLastPush(c: Context, e: ThreadEvent, opener: Task): Promise<ScmLineComment[]> {
  const runs = await c.deps.db
    .select({ finishedAt: tasks.finishedAt })
    .from(tasks)
    .where(or(eq(tasks.id, opener.id), eq(tasks.parentId, opener.id)));
  const since = Math.max(0, ...runs.map((r) => r.finishedAt?.getTime() ?? 0));
  const asker = e.actor.login.toLowerCase();
  return (await c.client.lineComments(c.trigger.repoOwner, c.trigger.repoName, c.thread.number))
    .filter((l) => l.author.toLowerCase() === asker && l.createdAt.getTime() >= since)
    .slice(-REVIEW_LINES);
}

async function followUp(c: Context, e: ThreadEvent, d: Extract<Decision, { act: 'follow_up' }>): Promise<Outcome> {
  const opener = await openedBy(c, c.thread.number);
  if (!opener) return { status: 'ignored', reason: 'not a pull request emend opened' };
  const running = await runningOn(c, 'pull');
  if (running) return alreadyWorking(c, running, 'pull');
  const head = e.thread.headRepo;
  if (
    head &&
    (head.owner.toLowerCase() !== c.trigger.repoOwner.toLowerCase() ||
      head.name.toLowerCase() !== c.trigger.repoName.toLowerCase())
  ) {
    await reply(
      c,
      `@${e.actor.login} this pull request's branch is in a fork; emend follows up only on branches of this repository.`,
    );
    return { status: 'answered', reason: 'the pull request comes from a fork' };
  }
  const branch = e.thread.headBranch ?? branchName(opener);
  let lines: Pick<ScmLineComment, 'path' | 'line' | 'body' | 'author'>[] = [];
  if (e.kind === 'line_comment')
    lines = [{ path: e.comment.path ?? '', line: e.comment.line ?? null, body: d.request, author: e.actor.login }];
  else if (e.kind === 'review' && e.review.id)
    lines = await c.client.lineComments(c.trigger.repoOwner, c.trigger.repoName, c.thread.number, e.review.id);
  else lines = await linesSinceLastPush(c, e, opener);
  const prompt = followUpPrompt(e.thread, d.request, lines);
  return start(c, { prompt, baseBranch: branch, followUpOf: opener.id, ...asked(c, e, 'pull') });
}
