import { and, eq, inArray, isNull, sql } from 'drizzle-orm';
import { repoTriggers, scmInstallations, tasks } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import type { DeliveryHeaders } from '../scm/deliveries.js';
import { type ScmHost, hostById } from '../scm/hosts.js';
import { CHANNELS } from '../events/bus.js';
import { endTask } from '../tasks/lifecycle/end.js';
import { ACTIVE_STATUSES, GATE_STATUSES } from '../tasks/states.js';
import { installationStopped } from '../workspaces/repo-credential.js';
import { repoKey } from '../memory/repo-memory.js';
import { type Received, parseBody, recordDelivery } from './receive.js';

/**
 * The GitHub App's one webhook (POST /v1/apps/{host}/webhook): verified with the app's secret,
 * then either the installation's own news (made, removed, suspended, repositories changed) or a
 * repository's event, routed by its installation to the workspace that claimed it and to that
 * workspace's triggers on the repository. Like the per-repository route, it answers before any
 * call to the host.
 */

type AppDeliveryDeps = Pick<
  Deps,
  'db' | 'config' | 'clock' | 'log' | 'queue' | 'appTokens' | 'metrics' | 'events' | 'runs'
>;

/**
 * The claiming workspace's unfinished tasks on the account's repositories end with the sentence a
 * new task would get (they could push nothing more there): failed, or cancelled when waiting at a
 * gate (a gate ends no other way). Their runs are aborted here or told to stop (NOTIFY) where they run.
 */
async function stopTasksOf(
  deps: AppDeliveryDeps,
  host: ScmHost,
  installation: { workspaceId: string | null; account: string },
  why: 'suspended' | 'removed',
): Promise<number> {
  if (!installation.workspaceId) return 0;
  const prefix = `${host.webUrl}/${installation.account}/`.toLowerCase();
  const running = await deps.db
    .select({ id: tasks.id, status: tasks.status })
    .from(tasks)
    .where(
      and(
        eq(tasks.workspaceId, installation.workspaceId),
        inArray(tasks.status, [...ACTIVE_STATUSES]),
        sql`starts_with(lower(${tasks.repoUrl}), ${prefix})`,
      ),
    );
  const error = installationStopped(host, installation.account, why).message;
  for (const { id, status } of running) {
    const end = GATE_STATUSES.some((s) => s === status) ? 'cancelled' : 'failed';
    if (!(await endTask(deps, id, { status: end, error }))) continue;
    await deps.runs.abort(id, error);
    await deps.events.publish(CHANNELS.taskKill, id).catch(() => {});
  }
  return running.length;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const textOf = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** The payload's action, installation and repository, read without trusting their shape. */
function readPayload(payload: unknown): {
  action?: string;
  installationId?: string;
  account?: string;
  accountType: 'User' | 'Organization';
  repo?: string;
} {
  const p = isObject(payload) ? payload : {};
  const inst = isObject(p.installation) ? p.installation : {};
  const account = isObject(inst.account) ? inst.account : {};
  const id = typeof inst.id === 'number' || typeof inst.id === 'string' ? String(inst.id) : undefined;
  return {
    action: textOf(p.action),
    installationId: id && /^\d+$/.test(id) ? id : undefined,
    account: textOf(account.login),
    accountType: account.type === 'Organization' ? 'Organization' : 'User',
    repo: isObject(p.repository) ? textOf(p.repository.full_name) : undefined,
  };
}

export async function receiveAppDelivery(
  deps: AppDeliveryDeps,
  d: { host: string; headers: DeliveryHeaders; body: Buffer },
): Promise<Received> {
  const host = hostById(deps.config, d.host);
  const app = host?.app;
  if (!host || !app) throw new AppError('not_found', `no GitHub App is configured for the host "${d.host}"`);
  if (!host.kind.verifyDelivery(d.headers, d.body, app.webhookSecret)) {
    deps.log.warn({ host: host.id }, 'app delivery with a missing or wrong signature refused');
    throw new AppError(
      'unauthorized',
      "the delivery is not signed with the app's webhook secret (X-Hub-Signature-256)",
    );
  }
  const deliveryId = host.kind.deliveryId(d.headers);
  const event = host.kind.deliveryEvent(d.headers);
  if (!deliveryId || !event) throw new AppError('bad_request', 'the delivery carries no delivery id or event header');
  const payload = parseBody(d.body);
  const p = readPayload(payload);
  if (!p.installationId)
    return { outcome: 'ignored', delivery: deliveryId, reason: 'the delivery names no installation' };
  const now = deps.clock.now();
  const where = and(eq(scmInstallations.host, host.id), eq(scmInstallations.installationId, p.installationId));
  const forget = () => deps.appTokens.forget(`${host.id}/${p.installationId}/`);

  if (event === 'installation') {
    if (p.action === 'created' || p.action === 'unsuspend' || p.action === 'new_permissions_accepted') {
      if (!p.account) return { outcome: 'ignored', delivery: deliveryId, reason: 'the installation names no account' };
      // Made again after an uninstall, it starts unclaimed: whoever claimed the old one may not own the new.
      await deps.db
        .insert(scmInstallations)
        .values({
          host: host.id,
          installationId: p.installationId,
          account: p.account,
          accountType: p.accountType,
          createdAt: now,
          updatedAt: now,
        })
        .onConflictDoUpdate({
          target: [scmInstallations.host, scmInstallations.installationId],
          set: { account: p.account, suspendedAt: null, updatedAt: now },
        });
      return { outcome: 'accepted', delivery: deliveryId };
    }
    if (p.action === 'suspend' || p.action === 'deleted') {
      forget();
      const set = p.action === 'suspend' ? { suspendedAt: now, updatedAt: now } : { removedAt: now, updatedAt: now };
      const [changed] = await deps.db.update(scmInstallations).set(set).where(where).returning();
      const stopped = changed
        ? await stopTasksOf(deps, host, changed, p.action === 'suspend' ? 'suspended' : 'removed')
        : 0;
      deps.log.info(
        { host: host.id, installation: p.installationId, action: p.action, stopped },
        'app installation changed',
      );
      return { outcome: 'accepted', delivery: deliveryId };
    }
    return { outcome: 'ignored', delivery: deliveryId, reason: `installation ${p.action ?? ''} changes nothing here` };
  }
  if (event === 'installation_repositories') {
    // The repositories an installation covers are asked of the host when a task needs them; only
    // tokens minted for a repository it no longer covers must go.
    forget();
    return { outcome: 'accepted', delivery: deliveryId };
  }

  const [installation] = await deps.db
    .select()
    .from(scmInstallations)
    .where(and(where, isNull(scmInstallations.removedAt)));
  if (!installation?.workspaceId)
    return { outcome: 'ignored', delivery: deliveryId, reason: 'no workspace has claimed this installation' };
  if (!p.repo) return { outcome: 'ignored', delivery: deliveryId, reason: 'the delivery names no repository' };
  const [trigger] = await deps.db
    .select()
    .from(repoTriggers)
    .where(
      and(
        eq(repoTriggers.repo, repoKey(`${host.webUrl}/${p.repo}`)),
        eq(repoTriggers.workspaceId, installation.workspaceId),
        eq(repoTriggers.host, host.id),
      ),
    );
  if (!trigger)
    return { outcome: 'ignored', delivery: deliveryId, reason: `triggers are not on for ${p.repo} in the workspace` };
  return recordDelivery(deps, host, trigger, { deliveryId, event, body: d.body });
}
