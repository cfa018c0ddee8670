import { and, count, eq, gte } from 'drizzle-orm';
import type { AuthContext } from '../accounts/authenticate.js';
import { billingPlan, billingPlanNameOf } from '../billing/billing-plan.js';
import { checkFixerAllowed, chooseFixer } from '../workspaces/fixer-choice.js';
import { checkAttemptsAllowed, chooseAttempts } from '../billing/attempt-limit.js';
import { repoAttemptsDefault } from '../repos/repo-settings.js';
import { requireModelFor } from '../workspaces/model-availability.js';
import type { FixerKind } from '../config/config.js';
import { type TaskTrigger, taskLogs, tasks } from '../db/schema.js';
import type { Tx } from '../db/client.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { admitTask, insertAdmitted, monthStart } from './lifecycle/admit.js';
import { refuseSecondOnThread } from './lifecycle/one-per-thread.js';
import { refusalFor } from './brief-policy.js';
import { checkRepoAccess } from './repo-access.js';
import { noticeSpend } from './spend-notices.js';
import { parseRepoUrl } from '../scm/urls.js';
import type { Task, TaskLog } from './task.js';

export type { Task, TaskLog } from './task.js';

export interface CreateTaskInput {
  prompt: string;
  task_type?: 'fix' | 'scaffold';
  repo_url?: string;
  base_branch?: string;
  approval_mode?: 'auto' | 'manual';
  /** Fix tasks: the fixer to run; default: the account's setting, else the operator's (docs/agent.md). */
  fixer?: FixerKind;
  /** Fix tasks: fixer attempts, the validator choosing; default: the repository's setting, else 1 (docs/agent.md). */
  attempts?: number;
}

/** Work the caller adds to the transaction that creates a task (storing an idempotent answer). */
export interface CreateOptions {
  within?: (tx: Tx, task: Task) => Promise<void>;
  /** A task a code-host trigger starts: where it was asked (src/triggers); at most one is active per thread. */
  trigger?: TaskTrigger;
  /** A follow-up on emend's pull request: the task that opened it (admitted as `follow_up`, pr mode). */
  followUpOf?: string;
}

/**
 * Who creates a task: a token's caller in its workspace, or (tokenId null, account null) a
 * code-host trigger of the workspace that enabled it.
 */
export type Creator = Pick<AuthContext, 'workspace' | 'tokenKind'> & {
  account: { id: string } | null;
  tokenId: string | null;
};

// biome-ignore lint/suspicious/noControlCharactersInRegex: git refuses control characters in branch names
const BRANCH = /^(?!\/|.*(?:\/\.|\/\/|\.\.|@\{|\\))[^\x00-\x20~^:?*[\x7f]{1,200}(?<![/.])$/;

/**
 * The prompt's length, counted as the published schema counts it (JSON Schema's minLength and
 * maxLength count code points): at most `max` code points as sent, and at least `min` left once
 * leading and trailing whitespace is trimmed (what is stored and shown to the model). `pattern`
 * says the second in the schema: a non-space, then one or more characters, then a non-space.
 */
export const PROMPT_LIMITS = { min: 3, max: 2000, pattern: '\\S[\\s\\S]+\\S' } as const;

export const PROMPT_RULE =
  `${PROMPT_LIMITS.min} to ${PROMPT_LIMITS.max} characters (Unicode code points, as sent), ` +
  `at least ${PROMPT_LIMITS.min} of them left once leading and trailing whitespace is trimmed`;

const codePoints = (text: string) => [...text].length;

/** Checks that need no database: shape of the prompt, the repository URL and the branch. */
function checkInput(deps: Pick<Deps, 'config'>, input: CreateTaskInput) {
  const taskType = input.task_type ?? 'fix';
  const prompt = input.prompt.trim();
  if (codePoints(prompt) < PROMPT_LIMITS.min || codePoints(input.prompt) > PROMPT_LIMITS.max)
    throw new AppError('bad_request', `prompt: must be ${PROMPT_RULE}`);
  const baseBranch = input.base_branch ?? 'main';
  if (!BRANCH.test(baseBranch))
    throw new AppError('bad_request', `base_branch: "${baseBranch}" is not a valid branch name`);
  if (taskType === 'scaffold') {
    if (input.repo_url !== undefined) throw new AppError('bad_request', 'repo_url: scaffold tasks take no repository');
    if (input.fixer !== undefined)
      throw new AppError('bad_request', "fixer: scaffold tasks take no fixer (the site's own steps build them)");
    if (input.attempts !== undefined)
      throw new AppError('bad_request', "attempts: scaffold tasks take no attempts (the site's own steps build them)");
    const refusal = refusalFor(prompt);
    if (refusal) throw new AppError('bad_request', `prompt: emend does not build sites for ${refusal}`);
    return { taskType, prompt, baseBranch, repo: null };
  }
  if (input.repo_url === undefined) throw new AppError('bad_request', 'repo_url: required for fix tasks');
  return { taskType, prompt, baseBranch, repo: parseRepoUrl(input.repo_url, deps.config) };
}

/**
 * Creates a task after the checks of the spec: the input's shape and the code host's answer
 * here, then quota, credit and concurrency (admitTask) in the transaction that inserts it.
 */
export async function createTask(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'fetch' | 'secretKey' | 'appTokens' | 'queue' | 'log'>,
  auth: Creator,
  input: CreateTaskInput,
  options: CreateOptions = {},
): Promise<Task> {
  const { taskType, prompt, baseBranch, repo } = checkInput(deps, input);
  const isDemo = auth.tokenKind === 'demo';
  // A fixer or a number of attempts the plan refuses is the request's fault: said before the code
  // host is asked or anything is counted.
  const askedPlanName = billingPlanNameOf(isDemo ? 'demo' : auth.workspace.plan);
  if (input.fixer !== undefined) checkFixerAllowed('fixer', input.fixer, billingPlan(askedPlanName), askedPlanName);
  if (input.attempts !== undefined)
    checkAttemptsAllowed('attempts', input.attempts, billingPlan(askedPlanName), askedPlanName);
  // A task no model can run is refused here, not failed by its planner a moment later: nothing is
  // created or counted against the month (issue 45). The BYOK choice is admission's, read the same way.
  await requireModelFor(deps, { workspaceId: auth.workspace.id, byok: !isDemo && auth.workspace.useByok });
  if (repo) {
    // Asked of the code host before the account row is locked: a slow host must not hold the lock.
    await checkRepoAccess(deps, {
      workspace: auth.workspace,
      isDemo,
      mode: options.followUpOf ? 'pr' : billingPlan(isDemo ? 'demo' : auth.workspace.plan).mode,
      repo,
    });
  }
  const now = deps.clock.now();
  const created = await deps.db.transaction(async (tx) => {
    const who = {
      workspaceId: auth.workspace.id,
      accountId: auth.account?.id ?? null,
      tokenId: auth.tokenId,
      isDemo: auth.tokenKind === 'demo',
    };
    // Looked for before admission, so a second asker on the thread hears of the first task rather
    // than of a limit that task fills (its credit, the plan's concurrency); ThreadTaskActive otherwise.
    if (options.trigger && repo)
      await refuseSecondOnThread(tx, {
        workspaceId: auth.workspace.id,
        host: options.trigger.host,
        repoOwner: repo.owner,
        repoName: repo.name,
        thread: options.trigger.thread,
        number: options.trigger.number,
      });
    const admission = await admitTask(tx, who, options.followUpOf ? 'follow_up' : 'new', now);
    // Decided on the locked row, once: the task keeps it whatever the account's setting becomes.
    const fixer =
      taskType === 'scaffold'
        ? 'pipeline'
        : chooseFixer({
            requested: input.fixer,
            workspaceDefault: admission.workspace.fixer,
            operatorDefault: deps.config.fixer.kind,
            billingPlan: admission.limits,
            billingPlanName: admission.billingPlanName,
          });
    const fixAttempts = repo
      ? chooseAttempts({
          requested: input.attempts,
          repoDefault: await repoAttemptsDefault(tx, auth.workspace.id, repo.url),
          billingPlan: admission.limits,
          billingPlanName: admission.billingPlanName,
        })
      : 1;
    const task = await insertAdmitted(
      tx,
      who,
      admission,
      {
        taskType,
        fixer,
        fixAttempts,
        approvalMode: input.approval_mode ?? admission.workspace.approvalMode,
        prompt,
        repoUrl: repo?.url ?? null,
        repoOwner: repo?.owner ?? null,
        repoName: repo?.name ?? null,
        baseBranch,
        parentId: options.followUpOf ?? null,
        trigger: options.trigger ?? null,
      },
      now,
    );
    await options.within?.(tx, task);
    return task;
  });
  if (created.creditHeld) await spendNoticed(deps, created);
  return created;
}

/** The credit just held may cross a spend limit's threshold: told after the task exists, never failing it. */
export async function spendNoticed(deps: Pick<Deps, 'db' | 'clock' | 'queue' | 'log'>, task: Task): Promise<void> {
  await noticeSpend(deps, task.workspaceId, task.createdBy).catch((err) =>
    deps.log.warn({ err, task: task.id }, 'spend-limit thresholds not recorded'),
  );
}

/** The workspace's task, or not_found: another workspace's task is indistinguishable from a missing one. */
export async function getOwnTask(deps: Pick<Deps, 'db'>, workspaceId: string, taskId: string): Promise<Task> {
  const rows = await deps.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, taskId), eq(tasks.workspaceId, workspaceId)))
    .limit(1);
  if (!rows[0]) throw new AppError('not_found', `no task ${taskId}`);
  return rows[0];
}

export async function taskLogsOf(deps: Pick<Deps, 'db'>, taskId: string): Promise<TaskLog[]> {
  return deps.db.select().from(taskLogs).where(eq(taskLogs.taskId, taskId)).orderBy(taskLogs.id);
}

export async function usedThisMonth(deps: Pick<Deps, 'db' | 'clock'>, auth: AuthContext): Promise<number> {
  const where =
    auth.tokenKind === 'demo'
      ? eq(tasks.tokenId, auth.tokenId)
      : and(eq(tasks.workspaceId, auth.workspace.id), gte(tasks.createdAt, monthStart(deps.clock.now())));
  const [row] = await deps.db.select({ n: count() }).from(tasks).where(where);
  return row!.n;
}
