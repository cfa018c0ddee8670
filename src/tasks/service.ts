import { and, count, desc, eq, gte, inArray } from 'drizzle-orm';
import type { AuthContext } from '../accounts/authenticate.js';
import { holdCredit } from '../accounts/credits.js';
import { planLimits } from '../accounts/plans.js';
import { accounts, taskLogs, tasks } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { refusalFor } from './brief-policy.js';
import { checkRepoAccess } from './repo-access.js';
import { parseRepoUrl } from '../scm/urls.js';
import { ACTIVE_STATUSES } from './states.js';

export type Task = typeof tasks.$inferSelect;
export type TaskLog = typeof taskLogs.$inferSelect;

export interface CreateTaskInput {
  prompt: string;
  task_type?: 'fix' | 'scaffold';
  repo_url?: string;
  base_branch?: string;
  approval_mode?: 'auto' | 'manual';
}

type Tx = Parameters<Parameters<Deps['db']['transaction']>[0]>[0];

/** Work the caller adds to the transaction that creates a task (storing an idempotent answer). */
export interface CreateOptions {
  within?: (tx: Tx, task: Task) => Promise<void>;
}

const BRANCH = /^(?!\/|.*(?:\/\.|\/\/|\.\.|@\{|\\))[^\x00-\x20~^:?*[\x7f]{1,200}(?<![/.])$/;

export function monthStart(now: Date): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
}

/** Checks that need no database: shape of the prompt, the repository URL and the branch. */
function checkInput(deps: Pick<Deps, 'config'>, input: CreateTaskInput) {
  const taskType = input.task_type ?? 'fix';
  const prompt = input.prompt.trim();
  if (prompt.length < 3 || prompt.length > 2000)
    throw new AppError('bad_request', 'prompt: must be 3 to 2000 characters');
  const baseBranch = input.base_branch ?? 'main';
  if (!BRANCH.test(baseBranch))
    throw new AppError('bad_request', `base_branch: "${baseBranch}" is not a valid branch name`);
  if (taskType === 'scaffold') {
    if (input.repo_url !== undefined) throw new AppError('bad_request', 'repo_url: scaffold tasks take no repository');
    const refusal = refusalFor(prompt);
    if (refusal) throw new AppError('bad_request', `prompt: emend does not build sites for ${refusal}`);
    return { taskType, prompt, baseBranch, repo: null };
  }
  if (input.repo_url === undefined) throw new AppError('bad_request', 'repo_url: required for fix tasks');
  return { taskType, prompt, baseBranch, repo: parseRepoUrl(input.repo_url, deps.config.scmWebUrl) };
}

/**
 * Creates a task after the checks of the spec, in one transaction with the account row
 * locked, so quotas, credits and the concurrency cap are exact under parallel requests.
 */
export async function createTask(
  deps: Pick<Deps, 'db' | 'clock' | 'config' | 'fetch' | 'secretKey'>,
  auth: AuthContext,
  input: CreateTaskInput,
  options: CreateOptions = {},
): Promise<Task> {
  const { taskType, prompt, baseBranch, repo } = checkInput(deps, input);
  if (repo) {
    // Asked of the code host before the account row is locked: a slow host must not hold the lock.
    const isDemo = auth.tokenKind === 'demo';
    await checkRepoAccess(deps, {
      account: auth.account,
      isDemo,
      mode: planLimits(isDemo ? 'demo' : auth.account.plan).mode,
      repo,
    });
  }
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const [account] = await tx.select().from(accounts).where(eq(accounts.id, auth.account.id)).for('update');
    if (!account) throw new AppError('invalid_token', 'the account behind this token no longer exists');
    const isDemo = auth.tokenKind === 'demo';
    const limits = planLimits(isDemo ? 'demo' : account.plan);
    if (isDemo) {
      const [used] = await tx.select({ n: count() }).from(tasks).where(eq(tasks.tokenId, auth.tokenId));
      if (used!.n >= limits.monthly) {
        throw new AppError(
          'DEMO_LIMIT_REACHED',
          `a demo token runs at most ${limits.monthly} tasks; sign up for a full account`,
        );
      }
    } else if (!account.useByok) {
      const [used] = await tx
        .select({ n: count() })
        .from(tasks)
        .where(and(eq(tasks.accountId, account.id), gte(tasks.createdAt, monthStart(now))));
      if (used!.n >= limits.monthly) {
        throw new AppError(
          'FREE_LIMIT_REACHED',
          `the ${account.plan} plan allows ${limits.monthly} tasks a month; upgrade or enable BYOK (POST /v1/me/byok)`,
        );
      }
    }
    const byok = !isDemo && account.useByok;
    const holdsCredit = limits.mode === 'pr' && !byok;
    if (holdsCredit && account.credits < 1) {
      throw new AppError('NO_CREDITS', 'no credits left for a pull-request run; add credits or enable BYOK');
    }
    const [active] = await tx
      .select({ n: count() })
      .from(tasks)
      .where(and(eq(tasks.accountId, account.id), inArray(tasks.status, [...ACTIVE_STATUSES])));
    if (active!.n >= limits.concurrent) {
      throw new AppError(
        'CONCURRENT_LIMIT',
        `at most ${limits.concurrent} active tasks at once on this plan; wait for one to finish`,
        5,
      );
    }
    const id = newId();
    const [task] = await tx
      .insert(tasks)
      .values({
        id,
        accountId: account.id,
        tokenId: auth.tokenId,
        taskType,
        mode: limits.mode,
        status: 'pending',
        approvalMode: input.approval_mode ?? account.approvalMode,
        prompt,
        repoUrl: repo?.url ?? null,
        repoOwner: repo?.owner ?? null,
        repoName: repo?.name ?? null,
        baseBranch,
        byok,
        creditHeld: holdsCredit,
        createdAt: now,
      })
      .returning();
    if (holdsCredit) await holdCredit(tx, account.id, id, now);
    await options.within?.(tx, task!);
    return task!;
  });
}

export const TASK_LIST_LIMIT = 100;

export async function listTasks(deps: Pick<Deps, 'db'>, accountId: string): Promise<Task[]> {
  return deps.db
    .select()
    .from(tasks)
    .where(eq(tasks.accountId, accountId))
    .orderBy(desc(tasks.createdAt), desc(tasks.id))
    .limit(TASK_LIST_LIMIT);
}

/** The caller's task, or not_found: another account's task is indistinguishable from a missing one. */
export async function getOwnTask(deps: Pick<Deps, 'db'>, accountId: string, taskId: string): Promise<Task> {
  const rows = await deps.db
    .select()
    .from(tasks)
    .where(and(eq(tasks.id, taskId), eq(tasks.accountId, accountId)))
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
      : and(eq(tasks.accountId, auth.account.id), gte(tasks.createdAt, monthStart(deps.clock.now())));
  const [row] = await deps.db.select({ n: count() }).from(tasks).where(where);
  return row!.n;
}
