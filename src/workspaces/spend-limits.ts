import { and, eq } from 'drizzle-orm';
import {
  type CapKind,
  type Caps,
  THRESHOLDS,
  type Threshold,
  type Used,
  monthOf,
  usedPerAccount,
  workspaceUsed,
} from '../billing/spend-limits.js';
import type { WorkspaceRole } from '../db/access-vocabulary.js';
import { workspaceMembers, workspaces } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { listMembers } from './members.js';
import { lockWorkspace } from './workspaces.js';

/** A cap reached to a threshold (80 % or 100 %) this month: what the panel's notice says. */
export interface SpendNotice {
  scope: 'workspace' | 'member';
  accountId: string | null;
  cap: CapKind;
  threshold: Threshold;
  limit: number;
  used: number;
  message: string;
}

export interface MemberSpend {
  accountId: string;
  email: string;
  name: string;
  role: WorkspaceRole;
  caps: Caps;
  used: Used;
}

/** The workspace's caps and each member's, with what each has used this UTC calendar month. */
export interface SpendLimits {
  month: string;
  caps: Caps;
  used: Used;
  members: MemberSpend[];
  notices: SpendNotice[];
}

/** The highest threshold `used` has reached of `limit`, if any. */
function thresholdOf(limit: number, used: number): Threshold | undefined {
  return [...THRESHOLDS].reverse().find((t) => used >= (limit * t) / 100);
}

function noticesFor(
  scope: SpendNotice['scope'],
  accountId: string | null,
  caps: Caps,
  used: Used,
  who: string,
): SpendNotice[] {
  const out: SpendNotice[] = [];
  for (const cap of ['usd', 'credits'] as const) {
    const limit = caps[cap];
    if (limit === null) continue;
    const threshold = thresholdOf(limit, used[cap]);
    if (threshold === undefined) continue;
    out.push({
      scope,
      accountId,
      cap,
      threshold,
      limit,
      used: used[cap],
      message: noticeText(scope, who, cap, limit, used[cap]),
    });
  }
  return out;
}

/** "this workspace's monthly model spend cap is 84 % used ($4.20 of $5.00)", or "… is reached …" at 100 %. */
function noticeText(scope: SpendNotice['scope'], who: string, cap: CapKind, limit: number, used: number): string {
  const whose = scope === 'workspace' ? "This workspace's" : `${who}'s`;
  const what = cap === 'usd' ? 'model spend' : 'credit';
  const amount = cap === 'usd' ? `$${used.toFixed(2)} of $${limit.toFixed(2)}` : `${used} of ${limit}`;
  if (used >= limit)
    return `${whose} monthly ${what} cap is reached (${amount} this month): new tasks are refused${cap === 'usd' ? ' and running ones stop' : ''}.`;
  return `${whose} monthly ${what} cap is ${Math.floor((used / limit) * 100)} % used (${amount} this month).`;
}

export async function spendLimitsOf(deps: Pick<Deps, 'db' | 'clock'>, workspaceId: string): Promise<SpendLimits> {
  const now = deps.clock.now();
  const [ws] = await deps.db
    .select({ usd: workspaces.monthlySpendCapUsd, credits: workspaces.monthlyCreditCap })
    .from(workspaces)
    .where(eq(workspaces.id, workspaceId));
  if (!ws) throw new AppError('not_found', `no workspace ${workspaceId}`);
  const used = await workspaceUsed(deps.db, workspaceId, now);
  const perAccount = await usedPerAccount(deps.db, workspaceId, now);
  const capRows = await deps.db
    .select({
      accountId: workspaceMembers.accountId,
      usd: workspaceMembers.monthlySpendCapUsd,
      credits: workspaceMembers.monthlyCreditCap,
    })
    .from(workspaceMembers)
    .where(eq(workspaceMembers.workspaceId, workspaceId));
  const capsOf = new Map(capRows.map((r) => [r.accountId, { usd: r.usd, credits: r.credits }]));
  const members = (await listMembers(deps, workspaceId)).map((m) => ({
    accountId: m.accountId,
    email: m.email,
    name: m.name,
    role: m.role,
    caps: capsOf.get(m.accountId) ?? { usd: null, credits: null },
    used: perAccount.get(m.accountId) ?? { usd: 0, credits: 0 },
  }));
  const notices = [
    ...noticesFor('workspace', null, ws, used, 'this workspace'),
    ...members.flatMap((m) => noticesFor('member', m.accountId, m.caps, m.used, m.name || m.email)),
  ];
  return { month: monthOf(now).key, caps: ws, used, members, notices };
}

export interface CapsInput {
  monthly_spend_cap_usd?: number | null;
  monthly_credit_cap?: number | null;
}

export interface SpendLimitsInput extends CapsInput {
  members?: (CapsInput & { account_id: string })[];
}

/** Cents at most: a cap of $5.005 is refused rather than rounded where the caller cannot see it. */
function checkUsd(field: string, value: number | null | undefined) {
  if (value === undefined || value === null) return;
  if (!Number.isFinite(value) || value < 0 || Math.abs(Math.round(value * 100) - value * 100) > 1e-6)
    throw new AppError(
      'bad_request',
      `${field}: must be a non-negative amount in US dollars with at most two decimals`,
    );
}

const columnsOf = (input: CapsInput) => ({
  ...(input.monthly_spend_cap_usd !== undefined ? { monthlySpendCapUsd: input.monthly_spend_cap_usd } : {}),
  ...(input.monthly_credit_cap !== undefined ? { monthlyCreditCap: input.monthly_credit_cap } : {}),
});

/**
 * Sets the workspace's caps and its members' (a field left out stays, null removes the cap), on
 * the workspace's locked row so that admission sees the old caps or the new ones, never half.
 */
export async function setSpendLimits(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  input: SpendLimitsInput,
): Promise<void> {
  checkUsd('monthly_spend_cap_usd', input.monthly_spend_cap_usd);
  const members = input.members ?? [];
  const seen = new Set<string>();
  for (const [i, m] of members.entries()) {
    checkUsd(`members[${i}].monthly_spend_cap_usd`, m.monthly_spend_cap_usd);
    if (seen.has(m.account_id))
      throw new AppError('bad_request', `members[${i}].account_id: ${m.account_id} is named twice`);
    seen.add(m.account_id);
  }
  await deps.db.transaction(async (tx) => {
    await lockWorkspace(tx, workspaceId);
    const own = columnsOf(input);
    if (Object.keys(own).length) await tx.update(workspaces).set(own).where(eq(workspaces.id, workspaceId));
    for (const [i, m] of members.entries()) {
      const set = columnsOf(m);
      const updated = await tx
        .update(workspaceMembers)
        .set(Object.keys(set).length ? set : { accountId: m.account_id })
        .where(and(eq(workspaceMembers.workspaceId, workspaceId), eq(workspaceMembers.accountId, m.account_id)))
        .returning({ accountId: workspaceMembers.accountId });
      if (updated.length === 0)
        throw new AppError(
          'bad_request',
          `members[${i}].account_id: ${m.account_id} is not a member of this workspace`,
        );
    }
  });
}
