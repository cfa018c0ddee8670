import { eq } from 'drizzle-orm';
import type { Tx } from '../db/client.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { accounts, apiTokens } from '../db/schema.js';
import { newId } from '../ids.js';
import { grantCredits } from './credits.js';
import type { BillingPlanName } from '../config/billing-plans.js';
import { isBillingPlanName } from './billing-plan.js';
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

/** Creates an account with a fresh full token; the secret is returned once and never stored. */
export async function createAccount(deps: Pick<Deps, 'db' | 'clock'>, input: NewAccount) {
  const email = checkEmail(input.email);
  const plan = input.plan ?? 'free';
  if (!isBillingPlanName(plan)) throw new AppError('bad_request', `plan: unknown plan "${plan}"`);
  const credits = input.credits ?? 0;
  if (!Number.isInteger(credits) || credits < 0)
    throw new AppError('bad_request', 'credits: must be a non-negative integer');
  const now = deps.clock.now();
  if (await findAccountByEmail(deps, email).then((a) => a && a.plan !== 'demo')) {
    throw new AppError('conflict', `an account with email ${email} already exists`);
  }
  return deps.db.transaction(async (tx) => {
    const [account] = await tx
      .insert(accounts)
      .values({ id: newId(), email, name: input.name ?? '', plan, isAdmin: input.isAdmin ?? false, createdAt: now })
      .returning();
    await grantCredits(tx, account!.id, credits, now, 'initial credits');
    const token = await insertToken(tx, account!.id, 'full', 'initial', now, null);
    const [fresh] = await tx.select().from(accounts).where(eq(accounts.id, account!.id));
    return { account: fresh!, token };
  });
}

export async function insertToken(
  tx: Tx | Deps['db'],
  accountId: string,
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
      accountId,
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

/** Changes an account's plan and/or sets its credit balance (the difference is a ledger grant). */
export async function updateAccount(
  deps: Pick<Deps, 'db' | 'clock'>,
  accountId: string,
  change: { plan?: string; credits?: number; isAdmin?: boolean },
): Promise<Account> {
  if (change.plan !== undefined && !isBillingPlanName(change.plan))
    throw new AppError('bad_request', `plan: unknown plan "${change.plan}"`);
  if (change.credits !== undefined && (!Number.isInteger(change.credits) || change.credits < 0)) {
    throw new AppError('bad_request', 'credits: must be a non-negative integer');
  }
  const now = deps.clock.now();
  return deps.db.transaction(async (tx) => {
    const [current] = await tx.select().from(accounts).where(eq(accounts.id, accountId)).for('update');
    if (!current) throw new AppError('not_found', `no account ${accountId}`);
    const set: Partial<typeof accounts.$inferInsert> = {};
    if (change.plan !== undefined) set.plan = change.plan;
    if (change.isAdmin !== undefined) set.isAdmin = change.isAdmin;
    if (Object.keys(set).length > 0) await tx.update(accounts).set(set).where(eq(accounts.id, accountId));
    if (change.credits !== undefined)
      await grantCredits(tx, accountId, change.credits - current.credits, now, 'set by admin');
    const [fresh] = await tx.select().from(accounts).where(eq(accounts.id, accountId));
    return fresh!;
  });
}

export async function findAccountByEmail(deps: Pick<Deps, 'db'>, email: string): Promise<Account | undefined> {
  // Demo accounts share emails with real ones; the CLI means the real one.
  const rows = await deps.db
    .select()
    .from(accounts)
    .where(eq(accounts.email, checkEmail(email)));
  return rows.find((a) => a.plan !== 'demo') ?? rows[0];
}
