import { and, eq, isNotNull, isNull, or, sql } from 'drizzle-orm';
import { type AuditActor, recordAudit } from '../audit/record.js';
import { repoTriggers } from '../db/schema.js';
import type { Deps } from '../deps.js';
import type { HookEvent } from '../scm/code-host.js';
import { hostById } from '../scm/hosts.js';
import { announceDeliveries } from '../webhooks/deliveries.js';
import { hostFor, scmTokenOn } from '../workspaces/scm-connection.js';
import { HOOK_EVENTS, type RepoTrigger, hookUrl, triggerSecret } from './repo-triggers.js';

/**
 * Hooks made before CI follow-ups (docs/triggers.md, "Hooks made before CI follow-ups"): a trigger's
 * webhook registered before emend asked for the checks' events sends none of them, so its pull
 * requests' failing CI would never reach emend. The workers' sweep asks the host, with the
 * enabling workspace's connection, to change such a hook's events to what emend registers now, and
 * records that the hook asks for them (`hook_events`), in one transaction with its audit row. A
 * hook the host will not change (its connection gone or no longer an admin, the hook removed on
 * the host) is logged and tried again on a later pass; nobody has to turn triggers off and on.
 */

type HookDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'log' | 'queue'>;

/** Hooks changed per pass, at most; the rest (in a random order, so that hooks that keep failing block none) on later passes. */
const PER_PASS = 100;

/** What every hook made before `hook_events` was recorded asks for: all but the checks. */
const BEFORE_RECORDED: HookEvent[] = ['issue_comment', 'issues', 'pull_request_review', 'pull_request_review_comment'];

/** The service acts, not a person: the audit row names no account, token or request. */
const SERVICE: AuditActor = {
  accountId: null,
  tokenId: null,
  sessionId: null,
  role: null,
  requestId: null,
  clientAddress: null,
  userAgent: null,
};

/** Triggers with a hook of their own that asks for fewer events than emend registers now. */
export async function outdatedHooks(deps: Pick<Deps, 'db'>, limit = PER_PASS): Promise<RepoTrigger[]> {
  return deps.db
    .select()
    .from(repoTriggers)
    .where(
      and(
        isNotNull(repoTriggers.hookId),
        or(
          isNull(repoTriggers.hookEvents),
          sql`not (${repoTriggers.hookEvents} @> ${JSON.stringify(HOOK_EVENTS)}::jsonb)`,
        ),
      ),
    )
    .orderBy(sql`random()`)
    .limit(limit);
}

/** One pass: each outdated hook's events changed on its host and recorded; how many were, and how many the host refused. */
export async function updateOutdatedHooks(deps: HookDeps): Promise<{ updated: number; failed: number }> {
  let [updated, failed] = [0, 0];
  for (const t of await outdatedHooks(deps)) {
    // One trigger's failure (its host, its record) leaves the others to be done.
    const done = await updateHook(deps, t).catch((err) => {
      deps.log.warn({ err, trigger: t.id }, 'an old webhook’s events could not be recorded; tried again later');
      return false;
    });
    if (done) updated++;
    else failed++;
  }
  return { updated, failed };
}

async function updateHook(deps: HookDeps, t: RepoTrigger): Promise<boolean> {
  const host = hostById(deps.config, t.host);
  const token = host && (await scmTokenOn(deps, t.workspaceId, host).catch(() => undefined));
  if (!host || !token) {
    deps.log.warn({ trigger: t.id }, 'a webhook made before CI follow-ups has no connection left to update it with');
    return false;
  }
  const before = t.hookEvents ?? BEFORE_RECORDED;
  try {
    await hostFor(deps, host, token).updateHook(t.repoOwner, t.repoName, t.hookId!, {
      url: hookUrl(deps.config, host.id, t.id),
      secret: triggerSecret(deps, t),
      events: HOOK_EVENTS,
    });
  } catch (err) {
    deps.log.warn({ err, trigger: t.id }, 'the code host did not change the webhook’s events; tried again later');
    return false;
  }
  const deliveries = await deps.db.transaction(async (tx) => {
    // Turned off (or made anew) since the look: nothing to record.
    const [row] = await tx
      .update(repoTriggers)
      .set({ hookEvents: HOOK_EVENTS })
      .where(and(eq(repoTriggers.id, t.id), eq(repoTriggers.hookId, t.hookId!)))
      .returning({ id: repoTriggers.id });
    if (!row) return [];
    const recorded = await recordAudit(tx, deps, {
      workspaceId: t.workspaceId,
      action: 'triggers.changed',
      actor: SERVICE,
      targets: { repo: `${host.webUrl.replace(/\/+$/, '')}/${t.repoOwner}/${t.repoName}`, trigger_id: t.id },
      detail: { by: 'service', hook_events_added: HOOK_EVENTS.filter((e) => !before.includes(e)) },
    });
    return recorded.deliveries;
  });
  await announceDeliveries(deps, deliveries);
  return true;
}
