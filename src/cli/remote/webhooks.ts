import { type Command, InvalidArgumentError } from 'commander';
import { WEBHOOK_EVENTS, type WebhookEvent } from '../../webhooks/events.js';
import { type Act, type RemoteContext, leaf } from './context.js';
import { EXIT, show, showList } from './output.js';

/** `--events task.done,task.failed`: each a known event. */
function events(value: string): WebhookEvent[] {
  const names = value.split(',').map((e) => e.trim());
  const unknown = names.filter((n) => !(WEBHOOK_EVENTS as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(`unknown event ${unknown.join(', ')}; events are ${WEBHOOK_EVENTS.join(', ')}`);
  return names as WebhookEvent[];
}

async function list(ctx: RemoteContext): Promise<number> {
  const hooks = await ctx.api().listWebhooks();
  return showList(ctx, hooks, {
    header: ['ID', 'URL', 'EVENTS', 'STATE'],
    row: (h) => [
      h.id,
      h.url,
      h.events.join(','),
      h.enabled ? 'on' : `off${h.disabled_reason ? `: ${h.disabled_reason}` : ''}`,
    ],
    empty: 'no webhook endpoints',
  });
}

async function add(ctx: RemoteContext, cmd: Command): Promise<number> {
  const flags = cmd.opts<{ events: WebhookEvent[]; description?: string }>();
  const made = await ctx.api().addWebhook({
    url: cmd.args[0]!,
    events: flags.events,
    ...(flags.description ? { description: flags.description } : {}),
  });
  // The secret goes to stdout alone, so `emend webhooks add … | …` pipes just the secret.
  return show(ctx, made, (h) => {
    ctx.o.err(`webhook ${h.id} for ${h.events.join(', ')}; its signing secret is shown this once:`);
    return [h.secret];
  });
}

async function setEnabled(ctx: RemoteContext, id: string, enabled: boolean): Promise<number> {
  const changed = await ctx.api().changeWebhook(id, { enabled });
  return show(ctx, changed, (h) => [`webhook ${h.id} is ${h.enabled ? 'on' : 'off'}`]);
}

async function remove(ctx: RemoteContext, cmd: Command): Promise<number> {
  await ctx.api().removeWebhook(cmd.args[0]!);
  return show(ctx, { id: cmd.args[0], deleted: true }, () => [`removed webhook ${cmd.args[0]}`]);
}

async function test(ctx: RemoteContext, cmd: Command): Promise<number> {
  const d = await ctx.api().testWebhook(cmd.args[0]!);
  show(ctx, d, (x) => [
    x.status === 'succeeded'
      ? `ping delivered: ${x.last_response_code} in ${x.duration_ms} ms`
      : `ping not delivered: ${x.last_response_code ?? x.last_error}`,
  ]);
  return d.status === 'succeeded' ? EXIT.ok : EXIT.failed;
}

async function deliveries(ctx: RemoteContext, cmd: Command): Promise<number> {
  const ds = await ctx.api().webhookDeliveries(cmd.args[0]!);
  return showList(ctx, ds, {
    header: ['ID', 'EVENT', 'STATUS', 'ATTEMPTS', 'LAST ANSWER', 'CREATED'],
    row: (d) => [
      d.id,
      d.event,
      d.status,
      String(d.attempts),
      String(d.last_response_code ?? d.last_error ?? ''),
      d.created_at,
    ],
    empty: 'no deliveries yet',
  });
}

async function redeliver(ctx: RemoteContext, cmd: Command): Promise<number> {
  const d = await ctx.api().redeliver(cmd.args[0]!, cmd.args[1]!);
  return show(ctx, d, (x) => [`queued delivery ${x.id} of ${x.event}`]);
}

/** `emend webhooks list|add|enable|disable|remove|test|deliveries|redeliver` (docs/webhooks.md). */
export function webhookCommands(program: Command, act: Act): void {
  const hooks = program.command('webhooks').description('signed notifications of task events (docs/webhooks.md)');
  leaf(hooks, 'list', 'your endpoints, without secrets').action(act(list));
  leaf(hooks, 'add', 'add an endpoint; its signing secret is printed once')
    .argument('<url>')
    .requiredOption('--events <names>', `comma-separated: ${WEBHOOK_EVENTS.join(', ')}`, events)
    .option('--description <text>', 'what it is for')
    .action(act(add));
  leaf(hooks, 'enable', 'turn an endpoint on again')
    .argument('<id>')
    .action(act((c, cmd) => setEnabled(c, cmd.args[0]!, true)));
  leaf(hooks, 'disable', 'pause an endpoint')
    .argument('<id>')
    .action(act((c, cmd) => setEnabled(c, cmd.args[0]!, false)));
  leaf(hooks, 'remove', 'delete an endpoint and its history').argument('<id>').action(act(remove));
  leaf(hooks, 'test', 'send a signed ping now; exit 1 when it is not delivered').argument('<id>').action(act(test));
  leaf(hooks, 'deliveries', "an endpoint's last 100 deliveries").argument('<id>').action(act(deliveries));
  leaf(hooks, 'redeliver', 'send a delivery again').argument('<id>').argument('<delivery_id>').action(act(redeliver));
}
