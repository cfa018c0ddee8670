import { type Command, InvalidArgumentError, Option } from 'commander';
import { MAX_CI_ROUNDS, TRIGGER_EVENT_NAMES, type TriggerEvent } from './api.js';
import { type Act, type RemoteContext, leaf } from './context.js';
import { readSecret } from './login.js';
import { EXIT, show, table } from './output.js';

// A workspace's setup from the command line, each one call of the routes the panel uses:
// the code-host connection (POST/DELETE /v1/me/scm, /v1/auth/scm/start|confirm), a repository's
// triggers (/v1/me/repos/triggers) and the defaults of new tasks (POST /v1/me/settings).

const hostOption = () =>
  new Option(
    '--host <id>',
    "the code host's id on the server (default: its first; `emend me` names the connected one)",
  );

async function scmConnect(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { host } = cmd.opts<{ host?: string }>();
  // Never from the command line (shell history, ps): stdin or a hidden prompt.
  const token = await readSecret('code-host personal access token');
  if (token === '') {
    ctx.o.err('emend: no token given (pipe it on stdin or type it at the prompt)');
    return EXIT.usage;
  }
  const connected = await ctx.api().connectScm({ token, ...(host ? { host } : {}) });
  return show(ctx, connected, (c) => [`connected to ${c.host} as ${c.scm}`]);
}

async function scmOAuth(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { host } = cmd.opts<{ host?: string }>();
  const started = await ctx.api().startScmOAuth(host);
  return show(ctx, started, (s) => {
    ctx.o.err(
      'open this address in a browser and approve; the page then shows a confirmation code: ' +
        'run `emend scm confirm CODE` within 10 minutes',
    );
    return [s.authorize_url];
  });
}

async function scmConfirm(ctx: RemoteContext, cmd: Command): Promise<number> {
  const connected = await ctx.api().confirmScmOAuth(cmd.args[0]!);
  return show(ctx, connected, (c) => [`connected to ${c.host} as ${c.scm}`]);
}

async function scmDisconnect(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { host } = cmd.opts<{ host?: string }>();
  const gone = await ctx.api().disconnectScm(host);
  return show(ctx, gone, (g) => [
    g.disconnected
      ? `disconnected from ${g.host} (its triggers were turned off)`
      : `nothing was connected on ${g.host}`,
  ]);
}

interface TriggerJson {
  repo: string;
  host: string;
  hook_url: string;
  mention: string;
  label: string;
  events: string[];
  ci_rounds: number;
  recent_deliveries: { event: string; status: string; reason: string | null; received_at: string }[];
}

function triggerLines(t: TriggerJson): string[] {
  const recent = t.recent_deliveries.slice(0, 5);
  return [
    ...table([
      ['repository:', t.repo],
      ['host:', t.host],
      ['events:', t.events.join(', ')],
      ['mention:', t.mention],
      ['label:', t.label],
      ['CI rounds:', t.ci_rounds === 0 ? 'off' : `${t.ci_rounds} per pull request`],
      ['hook URL:', `${t.hook_url} (the code host must be able to reach it)`],
    ]),
    ...(recent.length === 0
      ? ['no deliveries yet']
      : [
          'recent deliveries:',
          ...recent.map((d) => `  ${d.received_at}  ${d.event}  ${d.status}${d.reason ? `: ${d.reason}` : ''}`),
        ]),
  ];
}

async function triggersShow(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { repo } = cmd.opts<{ repo: string }>();
  return show(ctx, await ctx.api().getTriggers(repo), triggerLines);
}

async function triggersOn(ctx: RemoteContext, cmd: Command): Promise<number> {
  const f = cmd.opts<{ repo: string; mention?: string; label?: string; events?: TriggerEvent[]; ciRounds?: number }>();
  const turnedOn = await ctx.api().enableTriggers(f.repo, {
    ...(f.mention !== undefined ? { mention: f.mention } : {}),
    ...(f.label !== undefined ? { label: f.label } : {}),
    ...(f.events ? { events: f.events } : {}),
    ...(f.ciRounds !== undefined ? { ci_rounds: f.ciRounds } : {}),
  });
  return show(ctx, turnedOn, (t) => [`triggers on for ${t.repo}`, ...triggerLines(t)]);
}

async function triggersOff(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { repo } = cmd.opts<{ repo: string }>();
  const gone = await ctx.api().disableTriggers(repo);
  return show(ctx, gone, () => [`triggers off for ${repo} (its webhook was removed from the code host)`]);
}

/** `--ci-rounds 0..2`: automatic CI follow-ups per pull request. */
function ciRounds(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > MAX_CI_ROUNDS)
    throw new InvalidArgumentError(`a whole number from 0 (off) to ${MAX_CI_ROUNDS}`);
  return n;
}

/** `--events comments,labels`: each a known event. */
function events(value: string): TriggerEvent[] {
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(TRIGGER_EVENT_NAMES as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(`unknown event ${unknown.join(', ')}; events are ${TRIGGER_EVENT_NAMES.join(', ')}`);
  return names as TriggerEvent[];
}

const settingsLines = (s: { approval_mode: string; fixer: string | null }) =>
  table([
    ['approval mode:', s.approval_mode],
    ['fixer:', s.fixer ?? "the server's default"],
  ]);

async function settingsShow(ctx: RemoteContext): Promise<number> {
  // An empty body answers the settings as they are.
  return show(ctx, await ctx.api().updateSettings({}), settingsLines);
}

async function settingsSet(ctx: RemoteContext, cmd: Command): Promise<number> {
  const f = cmd.opts<{ fixer?: 'pipeline' | 'agent' | 'default'; approval?: 'auto' | 'manual' }>();
  if (f.fixer === undefined && f.approval === undefined) {
    ctx.o.err('emend: nothing to set (give --fixer or --approval)');
    return EXIT.usage;
  }
  const saved = await ctx.api().updateSettings({
    ...(f.approval ? { approval_mode: f.approval } : {}),
    ...(f.fixer ? { fixer: f.fixer === 'default' ? null : f.fixer } : {}),
  });
  return show(ctx, saved, settingsLines);
}

/** `emend scm ...`, `emend triggers ...`, `emend settings ...` (docs/client.md). */
export function setupCommands(program: Command, act: Act): void {
  const scm = program.command('scm').description('connect this workspace to a code host (docs/code-host.md)');
  leaf(scm, 'connect', 'connect with a personal access token (read from stdin, or typed at a hidden prompt)')
    .addOption(hostOption())
    .action(act(scmConnect));
  leaf(scm, 'oauth', 'print the address that connects through OAuth in a browser; then `emend scm confirm CODE`')
    .addOption(hostOption())
    .action(act(scmOAuth));
  leaf(scm, 'confirm', 'finish an OAuth connection with the code its page showed')
    .argument('<code>')
    .action(act(scmConfirm));
  leaf(scm, 'disconnect', 'forget the stored token (the triggers made with it are turned off)')
    .addOption(hostOption())
    .action(act(scmDisconnect));

  const repoFlag = () => new Option('--repo <url>', 'the repository URL').makeOptionMandatory();
  const triggers = program
    .command('triggers')
    .description("start tasks from a repository's issues and pull requests (docs/triggers.md)");
  leaf(triggers, 'show', "a repository's triggers and their latest deliveries")
    .addOption(repoFlag())
    .action(act(triggersShow));
  leaf(triggers, 'on', 'turn triggers on (registers a webhook with your code-host connection), or change them')
    .addOption(repoFlag())
    .option('--mention <text>', 'a comment mentioning this starts a task (default @emend)')
    .option('--label <name>', 'this label on an issue starts a task (default emend)')
    .option('--events <names>', `comma-separated: ${TRIGGER_EVENT_NAMES.join(', ')} (default: all)`, events)
    .option(
      '--ci-rounds <n>',
      `automatic CI follow-ups per pull request emend opened, 0 (off) to ${MAX_CI_ROUNDS} (default ${MAX_CI_ROUNDS})`,
      ciRounds,
    )
    .action(act(triggersOn));
  leaf(triggers, 'off', "turn a repository's triggers off (its webhook is removed)")
    .addOption(repoFlag())
    .action(act(triggersOff));

  const settings = program.command('settings').description("the workspace's defaults for new tasks");
  leaf(settings, 'show', 'the default approval mode and fixer').action(act(settingsShow));
  leaf(settings, 'set', 'change the defaults; what is not given stays')
    .addOption(
      new Option('--fixer <fixer>', 'the fixer of fix tasks that name none (default: the server’s)').choices([
        'pipeline',
        'agent',
        'default',
      ]),
    )
    .addOption(
      new Option('--approval <mode>', 'auto, or manual (stop at the plan and diff gates)').choices(['auto', 'manual']),
    )
    .action(act(settingsSet));
}
