import { sql } from 'drizzle-orm';
import { periodicRuns } from '../db/schema.js';
import type { Deps } from '../deps.js';

/**
 * Claims this period's run of a job for the calling worker: true for exactly one caller per
 * period across every worker process (the row update is the lock), false for the rest.
 */
export async function claimPeriodic(deps: Pick<Deps, 'db' | 'clock'>, name: string, everyMs: number): Promise<boolean> {
  const now = deps.clock.now();
  const due = new Date(now.getTime() - everyMs);
  const rows = await deps.db
    .insert(periodicRuns)
    .values({ name, lastRunAt: now })
    .onConflictDoUpdate({
      target: periodicRuns.name,
      set: { lastRunAt: now },
      where: sql`${periodicRuns.lastRunAt} <= ${due}`,
    })
    .returning({ name: periodicRuns.name });
  return rows.length === 1;
}
