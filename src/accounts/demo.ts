import { and, asc, eq, gt, sql } from 'drizzle-orm';
import { accounts, demoIssuance } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { createPersonalWorkspace } from '../workspaces/workspaces.js';
import { checkEmail, insertToken } from './accounts.js';
import { DEMO_TOKEN_DAYS } from '../billing/billing-plan.js';

export const DEMO_TOKENS_PER_IP = 3;
export const DEMO_WINDOW_MS = 24 * 3600_000;

/**
 * Issues a demo token on a fresh demo account of its own (never on an existing account
 * with that email: knowing someone's email must not give access to their account).
 * At most 3 per IP in 24 h, counted under a per-IP advisory lock so parallel requests
 * and API nodes agree.
 */
export async function issueDemoToken(deps: Pick<Deps, 'db' | 'clock'>, rawEmail: string, ip: string) {
  const email = checkEmail(rawEmail);
  const now = deps.clock.now();
  const windowStart = new Date(now.getTime() - DEMO_WINDOW_MS);
  return deps.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext(${`demo-issuance:${ip}`}))`);
    const recent = await tx
      .select({ createdAt: demoIssuance.createdAt })
      .from(demoIssuance)
      .where(and(eq(demoIssuance.ip, ip), gt(demoIssuance.createdAt, windowStart)))
      .orderBy(asc(demoIssuance.createdAt))
      .limit(DEMO_TOKENS_PER_IP);
    if (recent.length >= DEMO_TOKENS_PER_IP) {
      const retryAfter = Math.max(
        1,
        Math.ceil((recent[0]!.createdAt.getTime() + DEMO_WINDOW_MS - now.getTime()) / 1000),
      );
      throw new AppError(
        'rate_limited',
        `at most ${DEMO_TOKENS_PER_IP} demo tokens per address in 24 hours`,
        retryAfter,
      );
    }
    const accountId = newId();
    const [account] = await tx.insert(accounts).values({ id: accountId, email, createdAt: now }).returning();
    const workspace = await createPersonalWorkspace(tx, account!, { plan: 'demo', now });
    const expiresAt = new Date(now.getTime() + DEMO_TOKEN_DAYS * 86_400_000);
    const { secret } = await insertToken(tx, { accountId, workspaceId: workspace.id }, 'demo', 'demo', now, expiresAt);
    await tx.insert(demoIssuance).values({ ip, email, accountId, createdAt: now });
    return secret;
  });
}
