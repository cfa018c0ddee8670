import { and, eq } from 'drizzle-orm';
import { repoTriggers, scmGroupBots } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { repoKey } from '../memory/repo-memory.js';
import type { DeliveryHeaders } from '../scm/deliveries.js';
import { hostById } from '../scm/hosts.js';
import { groupBotSecret, inGroup } from '../workspaces/group-bots.js';
import { type Received, parseBody, recordDelivery } from './receive.js';

/**
 * A GitLab group's or Gitea organisation's one webhook (POST /v1/hooks/{host}/groups/{bot}):
 * verified the host's way with the bot's secret, then routed by the repository it names to the
 * bot's workspace's triggers on that repository. Like the per-repository route, it answers before
 * any call to the host.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export async function receiveGroupDelivery(
  deps: Pick<Deps, 'db' | 'config' | 'secretKey' | 'clock' | 'log' | 'queue'>,
  d: { host: string; botId: string; headers: DeliveryHeaders; body: Buffer },
): Promise<Received> {
  const host = hostById(deps.config, d.host);
  const [bot] =
    host && UUID.test(d.botId)
      ? await deps.db
          .select()
          .from(scmGroupBots)
          .where(and(eq(scmGroupBots.id, d.botId), eq(scmGroupBots.host, d.host)))
      : [];
  if (!host || !bot) {
    deps.log.warn({ host: d.host, bot: d.botId }, 'delivery for no registered group refused');
    throw new AppError('not_found', `no group bot is registered at ${d.host}/groups/${d.botId}`);
  }
  if (!host.kind.verifyDelivery(d.headers, d.body, groupBotSecret(deps, bot))) {
    deps.log.warn({ host: d.host, bot: bot.id }, 'group delivery with a missing or wrong signature refused');
    throw new AppError(
      'unauthorized',
      `the delivery is not signed with this group's secret (${host.kind.productName}'s way)`,
    );
  }
  const deliveryId = host.kind.deliveryId(d.headers);
  const event = host.kind.deliveryEvent(d.headers);
  if (!deliveryId || !event) throw new AppError('bad_request', 'the delivery carries no delivery id or event header');
  const read = host.kind.readEvent(event, parseBody(d.body));
  // Which repository it is about is read from the event: one emend does not read names none worth finding.
  if ('ignored' in read) return { outcome: 'ignored', delivery: deliveryId, reason: read.ignored };
  const { owner, name } = read.repo;
  const full = `${owner}/${name}`;
  if (!inGroup(bot, owner))
    return { outcome: 'ignored', delivery: deliveryId, reason: `${full} is not in ${bot.groupPath}` };
  const [trigger] = await deps.db
    .select()
    .from(repoTriggers)
    .where(
      and(
        eq(repoTriggers.repo, repoKey(`${host.webUrl}/${full}`)),
        eq(repoTriggers.workspaceId, bot.workspaceId),
        eq(repoTriggers.host, host.id),
      ),
    );
  if (!trigger)
    return { outcome: 'ignored', delivery: deliveryId, reason: `triggers are not on for ${full} in the workspace` };
  return recordDelivery(deps, host, trigger, { deliveryId, event, body: d.body });
}
