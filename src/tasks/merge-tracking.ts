import { and, eq, gte, isNotNull } from 'drizzle-orm';
import { tasks } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { hostFor } from '../workspaces/scm-connection.js';
import { repoCredential } from '../workspaces/repo-credential.js';
import type { Config } from '../config/config.js';
import { type ScmHost, hostOfUrl } from '../scm/hosts.js';
import { parseFixOutputs, readProgress } from '../step-contract/index.js';
import { announceDeliveries, recordEvent } from '../webhooks/deliveries.js';
import { taskJson } from './present.js';

/** Pull requests opened longer ago than this are no longer watched (closed or forgotten). */
const WATCH_DAYS = 30;

/** The host, owner, name and number of a pull (merge) request URL on a configured host, or undefined. */
export function pullOfUrl(
  config: Pick<Config, 'scmHosts'>,
  prUrl: string,
): { host: ScmHost; owner: string; name: string; number: number } | undefined {
  const found = hostOfUrl(config, prUrl);
  const pull = found?.host.kind.pullOfPath(found.path);
  return found && pull ? { host: found.host, ...pull } : undefined;
}

export interface MergeCheckReport {
  checked: number;
  merged: number;
  edited: number;
  failed: number;
}

/**
 * Looks at the open pull requests the service opened: marks the task pr_merged (with the
 * time) when the host says merged, and human_edit_after when the branch holds commits the
 * service did not make. Each PR is read with its account's token, anonymously when the
 * account has disconnected; one that cannot be read is tried again next time. A merge is a
 * pr.merged webhook event.
 */
type CheckDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'log' | 'queue' | 'appTokens'>;

export async function checkOpenPulls(deps: CheckDeps): Promise<MergeCheckReport> {
  const since = new Date(deps.clock.now().getTime() - WATCH_DAYS * 86_400_000);
  const rows = await deps.db
    .select({
      id: tasks.id,
      prUrl: tasks.prUrl,
      progress: tasks.progress,
      humanEdit: tasks.humanEditAfter,
      workspaceId: tasks.workspaceId,
    })
    .from(tasks)
    .where(and(isNotNull(tasks.prUrl), eq(tasks.prMerged, false), gte(tasks.createdAt, since)));
  const report: MergeCheckReport = { checked: 0, merged: 0, edited: 0, failed: 0 };
  const ours = deps.config.commitIdentity.email.toLowerCase();
  for (const row of rows) {
    const pull = pullOfUrl(deps.config, row.prUrl!);
    if (!pull) continue;
    report.checked++;
    try {
      const credential = await repoCredential(deps, row.workspaceId, pull.host, pull);
      const gh = hostFor(deps, pull.host, credential.token);
      const state = await gh.pull(pull.owner, pull.name, pull.number);
      // The commit the pr step pushed; a pr output that does not parse counts as none.
      const pr = parseFixOutputs(readProgress(row.progress).outputs).pr;
      const serviceCommit = (pr?.commit ?? '').toLowerCase();
      let humanEdit = row.humanEdit;
      if (!humanEdit) {
        const commits = await gh.pullCommits(pull.owner, pull.name, pull.number);
        humanEdit = commits.some(
          (c) =>
            c.sha.toLowerCase() !== serviceCommit &&
            ![ours, 'bot' in credential ? credential.bot.email.toLowerCase() : ours].includes(
              (c.authorEmail ?? '').toLowerCase(),
            ),
        );
      }
      const set: Partial<typeof tasks.$inferInsert> = {};
      if (humanEdit && !row.humanEdit) {
        set.humanEditAfter = true;
        report.edited++;
      }
      if (state.merged) {
        set.prMerged = true;
        set.prMergedAt = state.mergedAt ?? deps.clock.now();
        report.merged++;
      }
      if (Object.keys(set).length) await saveCheck(deps, row.id, set);
    } catch (err) {
      report.failed++;
      deps.log.warn({ task: row.id, problem: (err as Error).message }, 'could not check a pull request');
    }
  }
  return report;
}

/** Saves what a check found; a merge seen for the first time is a pr.merged webhook event, recorded with it. */
async function saveCheck(deps: CheckDeps, taskId: string, set: Partial<typeof tasks.$inferInsert>) {
  const now = deps.clock.now();
  const deliveries = await deps.db.transaction(async (tx) => {
    // prMerged only ever goes false → true: the guard makes the event fire once however many checks race.
    const where = set.prMerged ? and(eq(tasks.id, taskId), eq(tasks.prMerged, false)) : eq(tasks.id, taskId);
    const [row] = await tx.update(tasks).set(set).where(where).returning();
    return row && set.prMerged ? recordEvent(tx, now, row.workspaceId, 'pr.merged', { task: taskJson(row) }) : [];
  });
  await announceDeliveries(deps, deliveries);
}
