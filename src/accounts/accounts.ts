import { eq } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import type { TokenScope } from '../db/access-vocabulary.js';
import { accounts, apiTokens, workspaces } from '../db/schema.js';
import { applyPlanChange, checkPlanChange } from '../billing/plan-change.js';
import { type Workspace, createPersonalWorkspace } from '../workspaces/workspaces.js';
import { newId } from '../ids.js';
import { grantCredits } from '../billing/credits.js';
import type { BillingPlanName } from '../config/billing-plans.js';
import { isBillingPlanName } from '../billing/billing-plan.js';
import { type TokenKind, issueToken } from './token-secrets.js';

export type Account = typeof accounts.$inferSelect;

export interface NewAccount {
  email: string;
  name?: string;
  plan?: BillingPlanName;
  credits?: number;
  isAdmin?: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function checkEmail(email: string): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.test(e) || e.length > 254) throw new AppError('bad_request', `email: "${email}" is not an email address`);
  return e;
}

/**
 * Creates an account, its personal workspace (the plan and credits go there) and a fresh full
 * token in it; the secret is returned once and never stored.
 */
export async function createAccount(deps: Pick<Deps, 'db' | 'clock'>, input: NewAccount) {
  const email = checkEmail(input.email);
  const plan = input.plan ?? 'free';
  if (!isBillingPlanName(plan)) throw new AppError('bad_request', `plan: unknown plan "${plan}"`);
  const credits = input.credits ?? 0;
  if (!Number.isInteger(credits) || credits < 0)
    throw new AppError('bad_request', 'credits: must be a non-negative integer');
  const now = deps.clock.now();
  if (await findAccountByEmail(deps, email).then((a) => a && a.workspace.plan !== 'demo')) {
    throw new AppError('conflict', `an account with email ${email} already exists`);
  }
  return deps.db.transaction(async (tx) => {
    const [account] = await tx
      .insert(accounts)
      .values({ id: newId(), email, name: input.name ?? '', isAdmin: input.isAdmin ?? false, createdAt: now })
      .returning();
    const personal = await createPersonalWorkspace(tx, account!, { plan, now });
    await grantCredits(tx, personal.id, credits, now, 'initial credits');
    const token = await insertToken(
      tx,
      { accountId: account!.id, workspaceId: personal.id },
      'full',
      'initial',
      now,
      null,
    );
    const [workspace] = await tx.select().from(workspaces).where(eq(workspaces.id, personal.id));
    return { account: account!, workspace: workspace!, token };
  });
}

/** A token of `accountId`'s acting in `workspaceId` (with `scopes`, or all its role allows). */
export async function insertToken(
  tx: Tx | Deps['db'],
  owner: { accountId: string; workspaceId: string; scopes?: TokenScope[] | null },
  kind: TokenKind,
  name: string,
  now: Date,
  expiresAt: Date | null,
) {
  const issued = issueToken(kind);
  const [row] = await tx
    .insert(apiTokens)
    .values({
      id: newId(),
      accountId: owner.accountId,
      workspaceId: owner.workspaceId,
      scopes: owner.scopes ?? null,
      kind,
      name,
      tokenHash: issued.hash,
      last4: issued.last4,
      expiresAt,
      createdAt: now,
    })
    .returning();
  return { record: row!, secret: issued.secret };
}

/** An account with its personal workspace (whose plan and credits the operator's views show as the account's). */
export interface AccountView {
  account: Account;
  workspace: Workspace;
}

/**
 * Changes an account's personal workspace's plan and/or sets its credit balance (the difference is
 * a ledger grant), and the account's admin flag.
 */
export async function updateAccount(
  deps: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  change: { plan?: string; credits?: number; isAdmin?: boolean },
): Promise<AccountView> {
  checkPlanChange(change);
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const [current] = await tx
      .select({ account: accounts, workspace: workspaces })
      .from(accounts)
      .innerJoin(workspaces, eq(workspaces.personalOf, accounts.id))
      .where(eq(accounts.id, accountId))
      .for('update');
    if (!current) throw new AppError('not_found', `no account ${accountId}`);
    if (change.isAdmin !== undefined)
      await tx.update(accounts).set({ isAdmin: change.isAdmin }).where(eq(accounts.id, accountId));
    const workspace = await applyPlanChange(tx, current.workspace, change, now);
    const [account] = await tx.select().from(accounts).where(eq(accounts.id, accountId));
    return { account: account!, workspace };
  });
}

/** The account with that email (the real one when a demo account shares it), with its personal workspace. */
export async function findAccountByEmail(deps: Pick<Deps, 'db'>, email: string): Promise<AccountView | undefined> {
  // Demo accounts share emails with real ones; the CLI means the real one.
  const rows = await deps.db
    .select({ account: accounts, workspace: workspaces })
    .from(accounts)
    .innerJoin(workspaces, eq(workspaces.personalOf, accounts.id))
    .where(eq(accounts.email, checkEmail(email)));
  return rows.find((a) => a.workspace.plan !== 'demo') ?? rows[0];
}
