import { randomBytes } from 'node:crypto';
import { and, asc, eq, inArray } from 'drizzle-orm';
import { chosenHost, hostFor, scmTokenOn, scmUnavailable } from '../workspaces/scm-connection.js';
import { repoCredential } from '../workspaces/repo-credential.js';
import type { Db, Within } from '../db/client.js';
import { repoTriggers } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { repoKey } from '../memory/repo-memory.js';
import { type HookEvent, ScmError } from '../scm/code-host.js';
import type { ScmHost } from '../scm/hosts.js';
import type { RepoRef } from '../scm/urls.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';

/**
 * Triggers on a repository (docs/triggers.md): the account that turns them on registers a webhook
 * on the repository with its own connection, owns and pays for every task the repository's events
 * start. One account per repository on this server, so one mention never starts two tasks.
 */

export type RepoTrigger = typeof repoTriggers.$inferSelect;

/** What may start a task: a comment mentioning emend, the label, a review of emend's pull request. */
export const TRIGGER_EVENTS = ['comments', 'labels', 'reviews'] as const;
export type TriggerEvent = (typeof TRIGGER_EVENTS)[number];

/** At most this many automatic CI follow-ups per pull request emend opened (docs/triggers.md, "CI follow-ups"). */
export const MAX_CI_ROUNDS = 2;

export const TRIGGER_DEFAULTS = {
  mention: '@emend',
  label: 'emend',
  events: [...TRIGGER_EVENTS] as TriggerEvent[],
  ciRounds: MAX_CI_ROUNDS,
};

/**
 * The hook asks for every event triggers can act on; which ones start tasks is the row's `events`, so
 * changing them needs no host call. A hook asking for fewer (made before some were added: `hook_events`)
 * is brought up to date by the workers' sweep (hook-events.ts).
 */
export const HOOK_EVENTS: HookEvent[] = [
  'issue_comment',
  'issues',
  'pull_request_review',
  'pull_request_review_comment',
  'ci',
];

export interface TriggerOptions {
  mention?: string;
  label?: string;
  events?: TriggerEvent[];
  /** Automatic CI follow-ups per pull request, 0 (off) to MAX_CI_ROUNDS. */
  ciRounds?: number;
}

type TriggerDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'log'>;

/** The AEAD context of a trigger's secret: it opens for this trigger only. */
const secretContext = (id: string) => `trigger-secret:${id}`;

/** Where the host delivers a trigger's events: the public receiving route, under the service's base URL. */
export const hookUrl = (config: Pick<Deps['config'], 'baseUrl'>, host: string, id: string) =>
  `${config.baseUrl.replace(/\/+$/, '')}/v1/hooks/${encodeURIComponent(host)}/${id}`;

/** The trigger's secret, for verifying a delivery (never shown, logged or stored in the clear). */
export const triggerSecret = (deps: Pick<Deps, 'secretKey'>, t: RepoTrigger) =>
  decryptSecret(deps.secretKey, t.secretEnc, secretContext(t.id));

const byRepo = (repo: RepoRef) => eq(repoTriggers.repo, repoKey(repo.url));
const noTriggers = (repo: RepoRef) => new AppError('not_found', `triggers are not on for ${repo.url}`);

/** The caller's trigger on the repository, or not_found (another account's counts as none). */
export async function getTrigger(deps: Pick<Deps, 'db'>, workspaceId: string, repo: RepoRef): Promise<RepoTrigger> {
  const [row] = await deps.db
    .select()
    .from(repoTriggers)
    .where(and(byRepo(repo), eq(repoTriggers.workspaceId, workspaceId)));
  if (!row) throw noTriggers(repo);
  return row;
}

export async function listTriggers(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<RepoTrigger[]> {
  return deps.db
    .select()
    .from(repoTriggers)
    .where(eq(repoTriggers.workspaceId, workspaceId))
    .orderBy(asc(repoTriggers.repo));
}

/** The account's client on the trigger's host, with its connection; scm_not_connected without one. */
async function connectedHost(deps: TriggerDeps, workspaceId: string, host: ScmHost) {
  const token = await scmTokenOn(deps, workspaceId, host);
  if (!token)
    throw new AppError(
      'scm_not_connected',
      `triggers act as your ${host.id} account: connect it first (POST /v1/me/scm${host.id === deps.config.scmHosts[0]!.id ? '' : ` with "host": "${host.id}"`})`,
    );
  return hostFor(deps, host, token);
}

function checkOptions(o: TriggerOptions) {
  if (o.mention !== undefined && !/^@[A-Za-z0-9][A-Za-z0-9._-]{0,38}$/.test(o.mention))
    throw new AppError('bad_request', 'mention: an @ and a user name (letters, digits, ".", "_", "-"), e.g. "@emend"');
  if (o.label !== undefined && (o.label.trim() === '' || o.label.length > 50 || o.label !== o.label.trim()))
    throw new AppError('bad_request', 'label: 1 to 50 characters, no leading or trailing space');
  if (o.events !== undefined && o.events.length === 0)
    throw new AppError('bad_request', `events: at least one of ${TRIGGER_EVENTS.join(', ')}`);
  if (o.ciRounds !== undefined && (!Number.isInteger(o.ciRounds) || o.ciRounds < 0 || o.ciRounds > MAX_CI_ROUNDS))
    throw new AppError('bad_request', `ci_rounds: a whole number from 0 (off) to ${MAX_CI_ROUNDS}`);
}

/**
 * Turns triggers on (registering the webhook with a fresh secret) or, when they are on already for
 * the caller, changes their options. Another account's triggers on the repository are a conflict.
 */
export async function enableTrigger(
  deps: TriggerDeps & Pick<Deps, 'appTokens'>,
  workspaceId: string,
  repo: RepoRef,
  options: TriggerOptions,
  /** Run in the transaction that stores the trigger (its audit row); a hook made for it goes when that fails. */
  within?: Within<TriggerChange>,
): Promise<TriggerChange> {
  checkOptions(options);
  const now = deps.clock.now();
  const [existing] = await deps.db.select().from(repoTriggers).where(byRepo(repo));
  if (existing && existing.workspaceId === workspaceId) {
    const set = {
      ...(options.mention !== undefined ? { mention: options.mention } : {}),
      ...(options.label !== undefined ? { label: options.label } : {}),
      ...(options.events !== undefined ? { events: [...new Set(options.events)] } : {}),
      ...(options.ciRounds !== undefined ? { ciRounds: options.ciRounds } : {}),
      updatedAt: now,
    };
    return deps.db.transaction(async (tx) => {
      const [row] = await tx.update(repoTriggers).set(set).where(eq(repoTriggers.id, existing.id)).returning();
      // Turned off by another request since the look: nothing is changed.
      if (!row) throw noTriggers(repo);
      const changed = { trigger: row, created: false };
      await within?.(tx, changed);
      return changed;
    });
  }
  const host = chosenHost(deps, repo.host);
  // Where the workspace's GitHub App installation or group bot covers the repository, the app's or
  // the group's one webhook delivers its events: no hook is registered (and no person's admin token is needed).
  const credential = host.app || host.kind.groups ? await repoCredential(deps, workspaceId, host, repo) : undefined;
  const viaApp = credential?.via === 'app' || credential?.via === 'group';
  const client = viaApp ? hostFor(deps, host, credential.token) : await connectedHost(deps, workspaceId, host);
  if (existing) {
    // Said only to someone who may push there: others learn nothing about who uses this server.
    const seen = await client.repo(repo.owner, repo.name).catch((err) => {
      throw scmUnavailable(err);
    });
    if (!seen?.canPush && !viaApp) throw hookRefused(host, repo);
    throw takenBySomeoneElse(repo);
  }
  const id = newId();
  // Unused when the app or a group hook delivers (signed with their own secrets), kept so every row has one.
  const secret = randomBytes(32).toString('hex');
  let hookId: string | null = null;
  if (!viaApp) {
    try {
      ({ id: hookId } = await client.createHook(repo.owner, repo.name, {
        url: hookUrl(deps.config, host.id, id),
        secret,
        events: HOOK_EVENTS,
      }));
    } catch (err) {
      if (err instanceof ScmError && (err.status === 403 || err.status === 404)) throw hookRefused(host, repo);
      throw scmUnavailable(err);
    }
  }
  const row = {
    id,
    workspaceId,
    host: host.id,
    repo: repoKey(repo.url),
    repoOwner: repo.owner,
    repoName: repo.name,
    hookId,
    hookEvents: hookId === null ? null : HOOK_EVENTS,
    secretEnc: encryptSecret(deps.secretKey, secret, secretContext(id)),
    mention: options.mention ?? TRIGGER_DEFAULTS.mention,
    label: options.label ?? TRIGGER_DEFAULTS.label,
    events: [...new Set(options.events ?? TRIGGER_DEFAULTS.events)],
    ciRounds: options.ciRounds ?? TRIGGER_DEFAULTS.ciRounds,
    createdAt: now,
    updatedAt: now,
  };
  // The hook exists on the host now; the row and `within` commit together, or the hook goes again.
  let inserted: RepoTrigger | undefined;
  try {
    inserted = await deps.db.transaction(async (tx) => {
      const [made] = await tx.insert(repoTriggers).values(row).onConflictDoNothing().returning();
      if (made) await within?.(tx, { trigger: made, created: true });
      return made;
    });
  } catch (err) {
    await removeHook(deps, client, { ...row, hookId });
    throw err;
  }
  if (!inserted) {
    // Another request turned them on between the look and the insert: its hook stays, ours goes.
    await removeHook(deps, client, { ...row, hookId });
    throw takenBySomeoneElse(repo);
  }
  return { trigger: inserted, created: true };
}

/** What turning triggers on did: the trigger, and whether it was made now (its hook registered) or changed. */
export interface TriggerChange {
  trigger: RepoTrigger;
  created: boolean;
}

const hookRefused = (host: ScmHost, repo: RepoRef) =>
  new AppError(
    'forbidden',
    `${host.id} refused to add a webhook to ${repo.owner}/${repo.name} for your account: turning triggers on needs ` +
      `a connection that may manage the repository's webhooks (${host.kind.kind === 'gitlab' ? 'Maintainer' : 'admin'})`,
  );

const takenBySomeoneElse = (repo: RepoRef) =>
  new AppError(
    'conflict',
    `triggers for ${repo.url} are on under another account of this server; they must be turned off there first`,
  );

async function removeHook(
  deps: Pick<Deps, 'log'>,
  client: { deleteHook(owner: string, name: string, id: string): Promise<void> },
  t: Pick<RepoTrigger, 'repoOwner' | 'repoName' | 'hookId' | 'id'>,
): Promise<boolean> {
  // The app's and group bots' triggers have no hook of their own.
  if (t.hookId === null) return true;
  try {
    await client.deleteHook(t.repoOwner, t.repoName, t.hookId);
    return true;
  } catch (err) {
    // The row goes anyway: deliveries to a trigger that is no longer here are refused (404).
    deps.log.warn({ err, trigger: t.id }, 'the webhook could not be removed from the code host');
    return false;
  }
}

/**
 * How a trigger's webhook is removed from the host once its row has gone: the client is made now
 * (as the account, while its connection is still there) and used after the deletion has committed,
 * so no transaction waits on the host. A hook the host will not remove is logged: its deliveries
 * are refused from then on, as a trigger that is no longer here.
 */
async function hookRemoval(deps: TriggerDeps, t: RepoTrigger): Promise<() => Promise<void>> {
  // The app's and group bots' triggers have no hook: their one webhook's deliveries for the repository now find none.
  if (t.hookId === null) return async () => {};
  const host = chosenHost(deps, t.host);
  const token = await scmTokenOn(deps, t.workspaceId, host).catch(() => undefined);
  if (!token)
    return async () =>
      deps.log.warn({ trigger: t.id }, 'no connection left to remove the webhook with; its deliveries will be refused');
  const client = hostFor(deps, host, token);
  return async () => {
    await removeHook(deps, client, t);
  };
}

/**
 * Turns the caller's triggers on the repository off: the row goes (with `within`, its audit row, in
 * the same transaction), then its webhook on the host; not_found when they were not on.
 */
export async function disableTrigger(
  deps: TriggerDeps,
  workspaceId: string,
  repo: RepoRef,
  within?: Within<RepoTrigger>,
): Promise<void> {
  const t = await getTrigger(deps, workspaceId, repo);
  const removeItsHook = await hookRemoval(deps, t);
  await deps.db.transaction(async (tx) => {
    const gone = await tx.delete(repoTriggers).where(eq(repoTriggers.id, t.id)).returning({ id: repoTriggers.id });
    // Turned off by another request since the look: that one removes the hook.
    if (gone.length === 0) throw noTriggers(repo);
    await within?.(tx, t);
  });
  await removeItsHook();
}

/**
 * The workspace's triggers (on one host, or all) about to go with what they stand on (a
 * connection, the workspace): their ids, for the caller's transaction to delete, and the removal of
 * their webhooks from the host, to run once that has committed. The clients are made now, while the
 * connection still works.
 */
export async function triggersLeaving(
  deps: TriggerDeps,
  workspaceId: string,
  hostId?: string,
): Promise<{ ids: string[]; removeHooks: () => Promise<void> }> {
  const rows = (await listTriggers(deps, workspaceId)).filter((t) => hostId === undefined || t.host === hostId);
  const removals: (() => Promise<void>)[] = [];
  for (const t of rows) removals.push(await hookRemoval(deps, t));
  return {
    ids: rows.map((t) => t.id),
    removeHooks: async () => {
      for (const remove of removals) await remove();
    },
  };
}

/** Deletes triggers by id, in the caller's transaction (their hooks: triggersLeaving). */
export async function deleteTriggers(db: Db, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.delete(repoTriggers).where(inArray(repoTriggers.id, ids));
}
