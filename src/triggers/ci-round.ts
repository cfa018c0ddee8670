import { and, asc, eq } from 'drizzle-orm';
import { type TaskTrigger, ciRounds } from '../db/schema.js';
import { newId } from '../ids.js';
import type { CiJob } from '../scm/ci.js';
import type { ScmPull } from '../scm/code-host.js';
import type { HostEvent } from '../scm/host-events.js';
import { branchName } from '../tasks/branch-name.js';
import type { Task } from '../tasks/task.js';
import { clipLog } from './ci-log.js';
import { type FailingJob, ciPrompt } from './prompt.js';
import {
  type Acting,
  type Context,
  type Outcome,
  alreadyWorking,
  emendPulls,
  openedBy,
  reply,
  runningOn,
  start,
} from './thread-task.js';

/**
 * CI follow-ups (docs/triggers.md, "CI follow-ups"): when the checks of a pull request emend
 * opened fail, a follow-up on its branch whose prompt carries the failing jobs, their failing
 * steps, the tails of their logs and the failing tests they name. Automatic rounds wait until
 * the head commit's checks have all finished, act once per commit, at most the trigger's
 * `ci_rounds` times per pull request, and end (saying so in the thread) when a job the last round
 * was started for fails again. `@emend fix the CI` asks for a round by hand, whatever the count.
 */

type CiHostEvent = Extract<HostEvent, { kind: 'ci' }>;

/** Jobs a round reads the logs of and names in its prompt, at most. */
const MAX_JOBS = 3;
/** Emend's open pull requests asked for their head when a delivery names neither a pull request nor a branch. */
const MAX_PULLS_ASKED = 10;

const short = (sha: string) => sha.slice(0, 7);
const names = (jobs: { name: string }[]) => jobs.map((j) => `\`${j.name}\``).join(', ');

/** The pull request emend opened that the delivery is about: named, by its branch, or (a bare status) by its head. */
async function pullOf(a: Acting, e: CiHostEvent): Promise<{ number: number; opener: Task } | undefined> {
  const pulls = await emendPulls(a);
  if (e.ci.pulls.length > 0) return pulls.find((p) => e.ci.pulls.includes(p.number));
  if (e.ci.branch) return pulls.find((p) => branchName(p.opener) === e.ci.branch);
  const open = pulls.filter((p) => !p.opener.prMerged).slice(0, MAX_PULLS_ASKED);
  for (const p of open) {
    const pull = await a.client.pull(a.trigger.repoOwner, a.trigger.repoName, p.number).catch(() => undefined);
    if (pull?.state === 'open' && pull.headSha === e.ci.sha) return p;
  }
  return undefined;
}

/** Why a pull request takes no follow-up on its branch (closed, or its branch is in a fork), if it does not. */
function notOpenHere(pull: ScmPull): string | undefined {
  if (pull.state !== 'open') return 'the pull request is closed';
  if (pull.fromFork)
    return "the pull request's branch is in a fork; emend follows up only on branches of this repository";
  return undefined;
}

/** The automatic round for a failing check's delivery. */
export async function ciRound(a: Acting, e: CiHostEvent, secrets: string[]): Promise<Outcome> {
  const found = await pullOf(a, e);
  if (!found) return { status: 'ignored', reason: 'not a pull request emend opened' };
  const c: Context = { ...a, thread: { kind: 'pull', number: found.number } };
  // What the database can tell comes first: most deliveries about one failure end here, asking the host nothing.
  const running = await runningOn(c, 'pull');
  if (running) return { status: 'ignored', reason: `task ${running.id} is already working on the pull request` };
  const rounds = await c.deps.db
    .select()
    .from(ciRounds)
    .where(and(eq(ciRounds.triggerId, c.trigger.id), eq(ciRounds.pullNumber, found.number)))
    .orderBy(asc(ciRounds.createdAt), asc(ciRounds.id));
  const auto = rounds.filter((r) => r.kind === 'auto');
  if (auto.some((r) => r.sha === e.ci.sha))
    return { status: 'ignored', reason: `emend has acted on the failing checks of ${short(e.ci.sha)} already` };
  if (auto.some((r) => r.outcome === 'ended'))
    return { status: 'ignored', reason: 'automatic CI follow-ups on this pull request have ended' };
  const { repoOwner: owner, repoName: name } = c.trigger;
  const pull = await c.client.pull(owner, name, found.number);
  const closed = notOpenHere(pull);
  if (closed) return { status: 'ignored', reason: closed };
  if (pull.headSha !== e.ci.sha)
    return {
      status: 'ignored',
      reason: `the check ran on ${short(e.ci.sha)}, no longer the pull request's head (${short(pull.headSha)})`,
    };
  const jobs = await c.client.ciJobs(owner, name, pull.headSha);
  const failed = jobs.filter((j) => j.state === 'failed');
  const pending = jobs.filter((j) => j.state === 'pending');
  if (failed.length === 0) return { status: 'ignored', reason: `no check has failed on ${short(pull.headSha)}` };
  if (pending.length > 0)
    return {
      status: 'ignored',
      reason: `${pending.length} check(s) still running on ${short(pull.headSha)}: emend acts when they have finished`,
    };
  const last = rounds.filter((r) => r.outcome === 'started').at(-1);
  const again = last ? failed.filter((j) => last.jobs.includes(j.name)) : [];
  const ask = `mention ${c.trigger.mention} with "fix the CI" to ask for another round`;
  if (again.length > 0)
    return endRounds(
      c,
      pull,
      failed,
      `${names(again)} failed again after emend's follow-up (on ${short(pull.headSha)}), so emend stops fixing CI on this pull request by itself; ${ask}.`,
    );
  const made = auto.filter((r) => r.outcome === 'started').length;
  if (made >= c.trigger.ciRounds)
    return endRounds(
      c,
      pull,
      failed,
      `emend has made its ${made} automatic CI follow-up${made === 1 ? '' : 's'} on this pull request and ${names(failed)} still fail${failed.length === 1 ? 's' : ''} (on ${short(pull.headSha)}); ${ask}.`,
    );
  return runRound(c, { pull, opener: found.opener, failed, kind: 'auto', round: made + 1, request: '', secrets });
}

/** The automatic rounds are over on this pull request: recorded once, and said in the thread. */
async function endRounds(c: Context, pull: ScmPull, failed: CiJob[], text: string): Promise<Outcome> {
  const [row] = await c.deps.db
    .insert(ciRounds)
    .values({
      id: newId(),
      triggerId: c.trigger.id,
      pullNumber: pull.number,
      sha: pull.headSha,
      kind: 'auto',
      outcome: 'ended',
      jobs: failed.map((j) => j.name),
      createdAt: c.deps.clock.now(),
    })
    .onConflictDoNothing()
    .returning({ id: ciRounds.id });
  if (!row) return { status: 'ignored', reason: `another delivery acted on ${short(pull.headSha)}` };
  await reply(c, text);
  return { status: 'answered', reason: text };
}

/** A round a person asked for (`@emend fix the CI` on emend's pull request): the head's failing checks, whatever the count. */
export async function askedCiRound(c: Context, request: string): Promise<Outcome> {
  const opener = await openedBy(c, c.thread.number);
  if (!opener) return { status: 'ignored', reason: 'not a pull request emend opened' };
  const running = await runningOn(c, 'pull');
  if (running) return alreadyWorking(c, running, 'pull');
  const { repoOwner: owner, repoName: name } = c.trigger;
  const asker = `@${c.event.actor.login}`;
  const pull = await c.client.pull(owner, name, c.thread.number);
  const closed = notOpenHere(pull);
  if (closed) {
    await reply(c, `${asker} ${closed}.`);
    return { status: 'answered', reason: closed };
  }
  const jobs = await c.client.ciJobs(owner, name, pull.headSha);
  const failed = jobs.filter((j) => j.state === 'failed');
  if (failed.length === 0) {
    const pending = jobs.filter((j) => j.state === 'pending').length;
    const still = pending ? `; ${pending} still running` : '';
    const text = `no check has failed on the pull request's head (${short(pull.headSha)})${still}: nothing for emend to fix yet`;
    await reply(c, `${asker} ${text}.`);
    return { status: 'answered', reason: text };
  }
  return runRound(c, { pull, opener, failed, kind: 'manual', round: null, request, secrets: [] });
}

interface Round {
  pull: ScmPull;
  opener: Task;
  failed: CiJob[];
  kind: 'auto' | 'manual';
  round: number | null;
  request: string;
  /** Values to take out of the logs besides what looks like a secret (the token emend reads them with). */
  secrets: string[];
}

/** Reads the failing jobs' logs and starts the follow-up, recording the round first (one per commit for automatic ones). */
async function runRound(c: Context, r: Round): Promise<Outcome> {
  const { repoOwner: owner, repoName: name } = c.trigger;
  const id = newId();
  const [row] = await c.deps.db
    .insert(ciRounds)
    .values({
      id,
      triggerId: c.trigger.id,
      pullNumber: r.pull.number,
      sha: r.pull.headSha,
      kind: r.kind,
      outcome: 'started',
      jobs: r.failed.map((j) => j.name),
      createdAt: c.deps.clock.now(),
    })
    .onConflictDoNothing()
    .returning({ id: ciRounds.id });
  if (!row) return { status: 'ignored', reason: `another delivery acted on ${short(r.pull.headSha)}` };

  const jobs: FailingJob[] = [];
  for (const job of r.failed.slice(0, MAX_JOBS)) {
    const log = await c.client.ciLog(owner, name, job).catch((err) => {
      c.deps.log.warn({ err, job: job.name }, 'a failing job’s log could not be read');
      return null;
    });
    const clipped = log === null ? null : clipLog(log, r.secrets);
    jobs.push({
      name: job.name,
      source: job.source,
      ...(job.step || clipped?.step ? { step: job.step ?? clipped?.step } : {}),
      ...(job.summary ? { summary: job.summary } : {}),
      url: job.url,
      tail: clipped?.tail || null,
      tests: clipped?.tests ?? [],
    });
  }
  const e = c.event;
  const trigger: TaskTrigger = {
    host: c.host.id,
    kind: 'ci',
    thread: 'pull',
    number: r.pull.number,
    commentUrl: e.kind === 'comment' ? e.comment.url : (r.failed[0]!.url ?? r.pull.url),
    actor: e.actor.login,
    triggerId: c.trigger.id,
    ci: {
      sha: r.pull.headSha,
      jobs: jobs.map((j) => ({ name: j.name, ...(j.step ? { step: j.step } : {}) })),
      tests: [...new Set(jobs.flatMap((j) => j.tests))],
      round: r.round,
    },
  };
  const outcome = await start(c, {
    prompt: ciPrompt({ number: r.pull.number, title: r.pull.title }, r.pull.headSha, jobs, r.request),
    baseBranch: r.pull.headRef || branchName(r.opener),
    followUpOf: r.opener.id,
    trigger,
    ...(e.kind === 'comment' ? { reactOn: { on: 'comment' as const, thread: c.thread, commentId: e.comment.id } } : {}),
    unasked: r.kind === 'auto',
  });
  await c.deps.db
    .update(ciRounds)
    .set(outcome.status === 'started' ? { taskId: outcome.task.id } : { outcome: 'refused' })
    .where(eq(ciRounds.id, id));
  return outcome;
}
