import { randomBytes } from 'node:crypto';
import { and, asc, desc, eq, sql } from 'drizzle-orm';
import type { Within } from '../db/client.js';
import { scmGroupBots } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { type GroupHost, type HookEvent, ScmError } from '../scm/code-host.js';
import { type ScmHost, hostById, hostLabel } from '../scm/hosts.js';
import { decryptSecret, encryptSecret } from '../secrets/box.js';
import { chosenHost, scmUnavailable } from './scm-connection.js';

/**
 * A GitLab group's or a Gitea organisation's bot (docs/code-host.md, "GitLab groups and Gitea
 * organisations"): a workspace registers the bot's token once for the group; emend acts with it on
 * every repository of the group (GitLab: and of its subgroups), and the one group webhook it
 * registers delivers their events. One bot per group on the server.
 */

export type GroupBot = typeof scmGroupBots.$inferSelect;

type GroupDeps = Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock' | 'log'>;

/** Every event triggers act on: which ones start tasks is each trigger's own `events`. */
const HOOK_EVENTS: HookEvent[] = [
  'issue_comment',
  'issues',
  'pull_request_review',
  'pull_request_review_comment',
  'ci',
];

// The token and the hook's secret open for this row only (AES-GCM associated data).
const tokenContext = (id: string) => `group-bot-token:${id}`;
const secretContext = (id: string) => `group-bot-secret:${id}`;

export const groupBotToken = (deps: Pick<Deps, 'secretKey'>, b: GroupBot) =>
  decryptSecret(deps.secretKey, b.tokenEnc, tokenContext(b.id));
export const groupBotSecret = (deps: Pick<Deps, 'secretKey'>, b: GroupBot) =>
  decryptSecret(deps.secretKey, b.secretEnc, secretContext(b.id));

/** Where the host delivers the group's events: the public receiving route, under the service's base URL. */
export const groupHookUrl = (config: Pick<Deps['config'], 'baseUrl'>, host: string, id: string) =>
  `${config.baseUrl.replace(/\/+$/, '')}/v1/hooks/${encodeURIComponent(host)}/groups/${id}`;

/** The host's group side with a token; 400 on a host that has none (GitHub: its App does this). */
function groupsOf(deps: Pick<Deps, 'fetch'>, host: ScmHost, token: string): GroupHost {
  if (!host.kind.groups)
    throw new AppError(
      'bad_request',
      `host: ${hostLabel(host)} has no group bots${host.kind.kind === 'github' ? ' (install the GitHub App instead)' : ''}`,
    );
  return host.kind.groups({ apiUrl: host.apiUrl, fetch: deps.fetch, token });
}

const byGroup = (hostId: string, group: string) =>
  and(eq(scmGroupBots.host, hostId), sql`lower(${scmGroupBots.groupPath}) = lower(${group})`);

/** A group path as GitLab and Gitea spell them: segments of letters, digits, `_`, `.`, `-`. */
const GROUP = /^[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}(\/[A-Za-z0-9_.][A-Za-z0-9_.-]{0,254}){0,19}$/;

/** A refusal of the token by the host, said about the field that carries it. */
function tokenRefused(host: ScmHost, err: unknown, what: string): AppError {
  if (err instanceof ScmError && (err.status === 401 || err.status === 403))
    return new AppError('bad_request', `token: ${hostLabel(host)} refused it (${what})`);
  return scmUnavailable(err);
}

/**
 * Registers the bot: the token checked against the host (its user; that it sees the group), one
 * webhook on the group, the row. The same workspace registering again replaces the token (a
 * rotated group access token), keeping the hook; another workspace's group is a conflict.
 */
export async function registerGroupBot(
  deps: GroupDeps,
  workspaceId: string,
  input: { host?: string; group: string; token: string },
  /** Run in the transaction that stores the bot (its audit row); a hook made for it goes when that fails. */
  within?: Within<GroupBotChange>,
): Promise<GroupBotChange> {
  const host = chosenHost(deps, input.host);
  const wanted = input.group.trim().replace(/^\/+|\/+$/g, '');
  if (!GROUP.test(wanted) || (host.kind.kind !== 'gitlab' && wanted.includes('/')))
    throw new AppError(
      'bad_request',
      `group: ${host.kind.kind === 'gitlab' ? 'a group path such as "acme" or "acme/tools"' : 'an organisation name'}`,
    );
  if (input.token.trim() === '') throw new AppError('bad_request', 'token: empty');
  const groups = groupsOf(deps, host, input.token.trim());
  const me = await groups.self().catch((err) => {
    throw tokenRefused(host, err, 'checking the token');
  });
  const group = await groups.group(wanted).catch((err) => {
    throw tokenRefused(host, err, `reading ${wanted}`);
  });
  if (!group) throw new AppError('bad_request', `group: ${wanted} is not visible to the token's user ${me.login}`);
  const email = me.email ?? `${me.login}@noreply.${new URL(host.webUrl).hostname}`;
  const now = deps.clock.now();
  const [existing] = await deps.db.select().from(scmGroupBots).where(byGroup(host.id, group.path));
  if (existing && existing.workspaceId !== workspaceId) throw takenBySomeoneElse(group.path);
  if (existing) {
    const set = {
      botLogin: me.login,
      botName: me.name,
      botEmail: email,
      tokenEnc: encryptSecret(deps.secretKey, input.token.trim(), tokenContext(existing.id)),
      updatedAt: now,
    };
    return deps.db.transaction(async (tx) => {
      const [row] = await tx.update(scmGroupBots).set(set).where(eq(scmGroupBots.id, existing.id)).returning();
      // Removed by another request since the look: nothing is replaced.
      if (!row) throw noBot(host.id, group.path);
      const changed = { bot: row, created: false };
      await within?.(tx, changed);
      return changed;
    });
  }
  const id = newId();
  const secret = randomBytes(32).toString('hex');
  const hook = await groups
    .createGroupHook(group.path, { url: groupHookUrl(deps.config, host.id, id), secret, events: HOOK_EVENTS })
    .catch((err) => {
      if (err instanceof ScmError && (err.status === 401 || err.status === 403 || err.status === 404))
        throw new AppError(
          'bad_request',
          `token: ${hostLabel(host)} refused to add a webhook to ${group.path} for ${me.login}: the bot must ` +
            `manage the ${host.kind.kind === 'gitlab' ? "group's webhooks (Owner or Maintainer role)" : "organisation's webhooks (an owner of it)"}`,
        );
      throw scmUnavailable(err);
    });
  const row = {
    id,
    workspaceId,
    host: host.id,
    groupPath: group.path,
    groupId: group.id,
    botLogin: me.login,
    botName: me.name,
    botEmail: email,
    tokenEnc: encryptSecret(deps.secretKey, input.token.trim(), tokenContext(id)),
    hookId: hook.id,
    secretEnc: encryptSecret(deps.secretKey, secret, secretContext(id)),
    createdAt: now,
    updatedAt: now,
  };
  // The hook exists on the group now; the row and `within` commit together, or the hook goes again.
  let inserted: GroupBot | undefined;
  try {
    inserted = await deps.db.transaction(async (tx) => {
      const [made] = await tx.insert(scmGroupBots).values(row).onConflictDoNothing().returning();
      if (made) await within?.(tx, { bot: made, created: true });
      return made;
    });
  } catch (err) {
    await groups.deleteGroupHook(group.path, hook.id).catch(() => undefined);
    throw err;
  }
  if (!inserted) {
    // Registered by another request between the look and the insert: its hook stays, ours goes.
    await groups.deleteGroupHook(group.path, hook.id).catch(() => undefined);
    throw takenBySomeoneElse(group.path);
  }
  return { bot: inserted, created: true };
}

/** What registering a bot did: the bot, and whether it was registered now (its hook made) or its token replaced. */
export interface GroupBotChange {
  bot: GroupBot;
  created: boolean;
}

const noBot = (hostId: string, group: string) =>
  new AppError('not_found', `no bot is registered for ${group} on ${hostId} in this workspace`);

const takenBySomeoneElse = (group: string) =>
  new AppError(
    'conflict',
    `${group} has a bot registered by another workspace of this server; it must be removed there first`,
  );

export async function listGroupBots(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<GroupBot[]> {
  return deps.db
    .select()
    .from(scmGroupBots)
    .where(eq(scmGroupBots.workspaceId, workspaceId))
    .orderBy(asc(scmGroupBots.host), asc(scmGroupBots.groupPath));
}

/**
 * Removes the group's webhook with the bot's token (read from the row, kept in memory), once the
 * bot's row has gone; a hook the host will not remove is logged (its deliveries are refused from
 * then on, as a bot that is no longer here).
 */
async function removeGroupHook(deps: GroupDeps, bot: GroupBot): Promise<void> {
  const host = hostById(deps.config, bot.host);
  try {
    if (!host) throw new Error(`the host ${bot.host} is no longer configured`);
    await groupsOf(deps, host, groupBotToken(deps, bot)).deleteGroupHook(bot.groupPath, bot.hookId);
  } catch (err) {
    deps.log.warn({ err, bot: bot.id }, 'the group webhook could not be removed from the code host');
  }
}

/**
 * Removes the workspace's bot of the group: the row goes (with `within`, its audit row, in the
 * same transaction), then the group's webhook on the host; not_found when it has none there.
 */
export async function removeGroupBot(
  deps: GroupDeps,
  workspaceId: string,
  hostId: string | undefined,
  group: string,
  within?: Within<GroupBot>,
): Promise<void> {
  const host = chosenHost(deps, hostId);
  const [bot] = await deps.db
    .select()
    .from(scmGroupBots)
    .where(and(byGroup(host.id, group.trim()), eq(scmGroupBots.workspaceId, workspaceId)));
  if (!bot) throw noBot(host.id, group);
  await deps.db.transaction(async (tx) => {
    const gone = await tx.delete(scmGroupBots).where(eq(scmGroupBots.id, bot.id)).returning({ id: scmGroupBots.id });
    // Removed by another request since the look: that one removes the hook.
    if (gone.length === 0) throw noBot(host.id, group);
    await within?.(tx, bot);
  });
  await removeGroupHook(deps, bot);
}

/**
 * The workspace's bots, about to go with it (its deletion deletes their rows): the removal of their
 * groups' webhooks, to run once that has committed (each with the bot's own token, read now).
 */
export async function groupBotsLeaving(
  deps: GroupDeps,
  workspaceId: string,
): Promise<{ removeHooks: () => Promise<void> }> {
  const rows = await listGroupBots(deps, workspaceId);
  return {
    removeHooks: async () => {
      for (const b of rows) await removeGroupHook(deps, b);
    },
  };
}

/**
 * The workspace's bot whose group holds a repository of `owner`: the group itself or one above it
 * (GitLab's nested groups); the nearest when there are several.
 */
export async function groupBotFor(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  hostId: string,
  owner: string,
): Promise<GroupBot | undefined> {
  const path = scmGroupBots.groupPath;
  const [row] = await deps.db
    .select()
    .from(scmGroupBots)
    .where(
      and(
        eq(scmGroupBots.host, hostId),
        eq(scmGroupBots.workspaceId, workspaceId),
        sql`(lower(${path}) = lower(${owner}) or left(lower(${owner}), length(${path}) + 1) = lower(${path}) || '/')`,
      ),
    )
    .orderBy(desc(sql`length(${path})`))
    .limit(1);
  return row;
}

/** Whether a repository of `owner` is in the bot's group. */
export const inGroup = (bot: Pick<GroupBot, 'groupPath'>, owner: string) => {
  const [g, o] = [bot.groupPath.toLowerCase(), owner.toLowerCase()];
  return o === g || o.startsWith(`${g}/`);
};

/** The tokens and secrets of the workspace's bots, for redaction (src/engine/task-secrets.ts). */
export async function groupBotSecrets(deps: Pick<Deps, 'db' | 'secretKey'>, workspaceId: string): Promise<string[]> {
  const rows = await listGroupBots(deps, workspaceId);
  return rows.flatMap((b) => [groupBotToken(deps, b), groupBotSecret(deps, b)]);
}
