import type { SpendLimits, Workspace, WorkspaceInvitation } from '@emend/client';
import { Argument, type Command, InvalidArgumentError, Option } from 'commander';
import { WORKSPACE_ROLES, type WorkspaceRole } from '../../db/access-vocabulary.js';
import { type Act, type RemoteContext, leaf } from './context.js';
import { readSecret } from './login.js';
import { EXIT, printJson, show, showList, table } from './output.js';

// `emend workspaces …` (docs/teams.md). A token acts in one workspace: every command but list,
// create and accept acts in the token's, as GET /v1/me names it. To act in another, make a
// token for it (`emend tokens create --workspace ID`) and use that one.

/** The workspace the token acts in. */
async function current(ctx: RemoteContext) {
  const me = await ctx.api().me();
  if (!(me.workspace as typeof me.workspace | undefined))
    throw new Error(`this server has no workspaces (it predates them)`);
  return { id: me.workspace.id, name: me.workspace.name, role: me.role, accountId: me.id };
}

const kind = (w: { personal: boolean }) => (w.personal ? 'personal' : 'team');

function workspaceLines(w: Workspace): string[] {
  return table([
    ['id:', w.id],
    ['name:', w.name],
    ['kind:', kind(w)],
    ['your role:', w.role],
    ['plan:', `${w.plan}, ${w.credits} credits`],
    ['created:', w.created_at],
  ]);
}

/** How to act in a workspace from the command line. */
const tokenHint = (id: string) => `to act in it: emend tokens create --workspace ${id} (then use that token)`;

async function list(ctx: RemoteContext): Promise<number> {
  const [all, here] = await Promise.all([ctx.api().listWorkspaces(), current(ctx)]);
  return showList(ctx, all, {
    header: ['', 'ID', 'NAME', 'KIND', 'ROLE', 'PLAN', 'CREDITS'],
    row: (w) => [w.id === here.id ? '*' : '', w.id, w.name, kind(w), w.role, w.plan, String(w.credits)],
  });
}

async function create(ctx: RemoteContext, cmd: Command): Promise<number> {
  const made = await ctx.api().createWorkspace(cmd.args[0]!);
  return show(ctx, made, (w) => {
    ctx.o.err(tokenHint(w.id));
    return [`created workspace ${w.id} (${w.name}); you are its owner`];
  });
}

async function showCurrent(ctx: RemoteContext): Promise<number> {
  const w = await ctx.api().getWorkspace((await current(ctx)).id);
  return show(ctx, w, workspaceLines);
}

async function rename(ctx: RemoteContext, cmd: Command): Promise<number> {
  const w = await ctx.api().renameWorkspace((await current(ctx)).id, cmd.args[0]!);
  return show(ctx, w, (x) => [`renamed workspace ${x.id} to ${x.name}`]);
}

async function remove(ctx: RemoteContext, cmd: Command): Promise<number> {
  const here = await current(ctx);
  if (cmd.opts<{ yes?: boolean }>().yes !== true) {
    ctx.o.err(
      `emend: deleting workspace ${here.id} (${here.name}) removes its tasks, members, tokens, keys, connections ` +
        'and settings for good (its credit ledger is kept); add --yes to go ahead',
    );
    return EXIT.usage;
  }
  await ctx.api().deleteWorkspace(here.id);
  return show(ctx, { id: here.id, deleted: true }, () => [
    `deleted workspace ${here.id} (${here.name}); its tokens, this one too, no longer work`,
  ]);
}

async function exportAll(ctx: RemoteContext): Promise<number> {
  // JSON whatever the flags: it is for keeping, or for another program.
  return printJson(ctx.o, await ctx.api().exportWorkspace((await current(ctx)).id));
}

async function members(ctx: RemoteContext): Promise<number> {
  const ms = await ctx.api().listMembers((await current(ctx)).id);
  return showList(ctx, ms, {
    header: ['ACCOUNT', 'EMAIL', 'NAME', 'ROLE', 'SINCE'],
    row: (m) => [m.account_id, m.email, m.name, m.role, m.since],
  });
}

/**
 * The member a command names, by account id or email (case ignored); null, said on stderr, when
 * the workspace has none such (the command line named someone wrong: exit 64).
 */
async function memberNamed(ctx: RemoteContext, here: { id: string; name: string }, who: string) {
  const ms = await ctx.api().listMembers(here.id);
  const found = ms.find((m) => m.account_id === who || m.email.toLowerCase() === who.toLowerCase());
  if (!found) ctx.o.err(`emend: no member "${who}" in ${here.name} (emend workspaces members lists them)`);
  return found ?? null;
}

async function setRole(ctx: RemoteContext, cmd: Command): Promise<number> {
  const here = await current(ctx);
  const m = await memberNamed(ctx, here, cmd.args[0]!);
  if (!m) return EXIT.usage;
  const changed = await ctx.api().setMemberRole(here.id, m.account_id, cmd.args[1] as WorkspaceRole);
  return show(ctx, changed, (x) => [`${x.email} is now ${x.role}`]);
}

async function removeMember(ctx: RemoteContext, cmd: Command): Promise<number> {
  const here = await current(ctx);
  const m = await memberNamed(ctx, here, cmd.args[0]!);
  if (!m) return EXIT.usage;
  await ctx.api().removeMember(here.id, m.account_id);
  return show(ctx, { account_id: m.account_id, removed: true }, () => [
    `removed ${m.email} from ${here.name}; their tokens for it are revoked`,
  ]);
}

async function leave(ctx: RemoteContext): Promise<number> {
  const here = await current(ctx);
  await ctx.api().leaveWorkspace(here.id);
  return show(ctx, { id: here.id, left: true }, () => [
    `left workspace ${here.id} (${here.name}); your tokens for it, this one too, are revoked`,
  ]);
}

async function transfer(ctx: RemoteContext, cmd: Command): Promise<number> {
  const here = await current(ctx);
  const m = await memberNamed(ctx, here, cmd.args[0]!);
  if (!m) return EXIT.usage;
  const after = await ctx.api().transferWorkspace(here.id, m.account_id);
  return show(ctx, after, () => [`${m.email} now owns ${here.name}; you stay as a maintainer`]);
}

async function invite(ctx: RemoteContext, cmd: Command): Promise<number> {
  const flags = cmd.opts<{ role: WorkspaceRole; email?: string; expiresInDays?: number }>();
  const here = await current(ctx);
  const made = await ctx.api().createInvitation(here.id, {
    role: flags.role,
    ...(flags.email ? { email: flags.email } : {}),
    ...(flags.expiresInDays ? { expires_in_days: flags.expiresInDays } : {}),
  });
  // The link goes to stdout alone, so `emend workspaces invite … | …` pipes just the link.
  return show(ctx, made, (i) => {
    ctx.o.err(
      `invitation ${i.id} to ${here.name} as ${i.role}, until ${i.expires_at}; its one-time link is shown this once ` +
        '(accept it in the control panel, or with `emend workspaces accept`):',
    );
    return [i.url];
  });
}

function invitationState(i: WorkspaceInvitation): string {
  if (i.status === 'accepted') return `accepted ${i.accepted_at}`;
  // Revoked with no time: its inviter can no longer make it, and nobody has tried it since (docs/teams.md).
  if (i.status === 'revoked')
    return i.revoked_at ? `revoked ${i.revoked_at}` : 'revoked (its inviter can no longer invite)';
  if (i.status === 'expired') return `expired ${i.expires_at}`;
  return `open until ${i.expires_at}`;
}

async function invitations(ctx: RemoteContext): Promise<number> {
  const is = await ctx.api().listInvitations((await current(ctx)).id);
  return showList(ctx, is, {
    header: ['ID', 'ROLE', 'EMAIL', 'STATE', 'CREATED'],
    row: (i) => [i.id, i.role, i.email ?? '', invitationState(i), i.created_at],
    empty: 'no invitations',
  });
}

async function revokeInvitation(ctx: RemoteContext, cmd: Command): Promise<number> {
  const revoked = await ctx.api().revokeInvitation((await current(ctx)).id, cmd.args[0]!);
  return show(ctx, revoked, (i) => [`revoked invitation ${i.id}`]);
}

/** The secret of an invitation: given alone, or as the link the inviter got (…/invitation/SECRET). */
export function invitationSecret(given: string): string {
  const m = /\/invitation\/([^/?#\s]+)\/?$/.exec(given);
  return m ? decodeURIComponent(m[1]!) : given;
}

async function accept(ctx: RemoteContext): Promise<number> {
  const given = await readSecret('Invitation link or secret');
  if (given === '') {
    ctx.o.err('emend: no invitation given (pipe the link on stdin or paste it at the prompt)');
    return EXIT.usage;
  }
  const joined = await ctx.api().acceptInvitation(invitationSecret(given));
  return show(ctx, joined, (w) => {
    ctx.o.err(tokenHint(w.id));
    return [`joined workspace ${w.id} (${w.name}) as ${w.role}`];
  });
}

const capOf = (cap: number | null, show: (n: number) => string) => (cap === null ? 'no cap' : show(cap));
const dollars = (n: number) => `$${n.toFixed(2)}`;

function limitsLines(l: SpendLimits): string[] {
  return [
    ...table([
      ['month:', `${l.month} (UTC)`],
      ['model spend:', `${dollars(l.spent_usd)} of ${capOf(l.monthly_spend_cap_usd, dollars)}`],
      ['credits:', `${l.credits_used} of ${capOf(l.monthly_credit_cap, String)}`],
    ]),
    ...l.members.map(
      (m) =>
        `  ${m.email}: ${dollars(m.spent_usd)} of ${capOf(m.monthly_spend_cap_usd, dollars)}, ` +
        `${m.credits_used} of ${capOf(m.monthly_credit_cap, String)} credits`,
    ),
    ...l.notices.map((n) => `notice: ${n.message}`),
  ];
}

/** `--spend-cap 25`, `--credit-cap 10`; `none` removes the cap (kept as the word: commander turns a parsed null into ''). */
const cap = (integer: boolean) => (value: string) => {
  if (value === 'none') return value;
  if (!(integer ? /^\d{1,10}$/ : /^\d{1,10}(\.\d{1,2})?$/).test(value))
    throw new InvalidArgumentError(
      `expects ${integer ? 'a whole number' : 'an amount in US dollars (at most two decimals)'} or none, got "${value}"`,
    );
  return Number(value);
};

/** Shows the spend limits and the month's use; with --spend-cap or --credit-cap, sets the workspace's first (owner). */
async function limits(ctx: RemoteContext, cmd: Command): Promise<number> {
  const id = (await current(ctx)).id;
  const o = cmd.opts<{ spendCap?: number | 'none'; creditCap?: number | 'none' }>();
  const or = (v: number | 'none') => (v === 'none' ? null : v);
  const body = {
    ...(o.spendCap !== undefined ? { monthly_spend_cap_usd: or(o.spendCap) } : {}),
    ...(o.creditCap !== undefined ? { monthly_credit_cap: or(o.creditCap) } : {}),
  };
  const l = Object.keys(body).length ? await ctx.api().setSpendLimits(id, body) : await ctx.api().getSpendLimits(id);
  return show(ctx, l, limitsLines);
}

function days(value: string): number {
  if (!/^[1-9]\d{0,2}$/.test(value)) throw new InvalidArgumentError(`expects a whole number of days, got "${value}"`);
  return Number(value);
}

const member = () => new Argument('<member>', 'an account id or email, as `emend workspaces members` shows');

/** `emend workspaces list|create|show|rename|delete|export|members|limits|role|remove|leave|transfer|invite|invitations|revoke-invitation|accept`. */
export function workspaceCommands(program: Command, act: Act): void {
  const command = program
    .command('workspaces')
    .description("workspaces, their members and invitations (docs/teams.md); most act in the token's workspace");
  leaf(command, 'list', 'the workspaces you belong to; * marks the one this token acts in').action(act(list));
  leaf(command, 'create', 'create a team workspace; you are its owner').argument('<name>').action(act(create));
  leaf(command, 'show', 'the workspace this token acts in, and your role').action(act(showCurrent));
  leaf(command, 'rename', 'rename it (owner)').argument('<name>').action(act(rename));
  leaf(command, 'delete', 'delete it with all it holds but its credit ledger (owner, a team workspace)')
    .option('--yes', 'yes, delete it')
    .action(act(remove));
  leaf(command, 'export', 'everything it holds as JSON, without secrets (owner)').action(act(exportAll));
  leaf(command, 'members', 'its members, owner first').action(act(members));
  leaf(command, 'limits', "its monthly spend caps and this month's use; the options set the workspace's (owner)")
    .option('--spend-cap <usd>', 'monthly model spend cap in US dollars, or none', cap(false))
    .option('--credit-cap <credits>', 'monthly credit cap, or none', cap(true))
    .action(act(limits));
  leaf(command, 'role', "change a member's role (maintainer, below owner; ownership moves by transfer)")
    .addArgument(member())
    .addArgument(new Argument('<role>').choices(WORKSPACE_ROLES.filter((r) => r !== 'owner')))
    .action(act(setRole));
  leaf(command, 'remove', 'remove a member below the owner; their tokens for it are revoked')
    .addArgument(member())
    .action(act(removeMember));
  leaf(command, 'leave', 'leave it (not its owner); your tokens for it, this one too, are revoked').action(act(leave));
  leaf(command, 'transfer', 'make another member the owner (owner); you stay as a maintainer')
    .addArgument(member())
    .action(act(transfer));
  leaf(command, 'invite', 'invite someone (maintainer); the one-time link is printed once')
    .addOption(
      new Option('--role <role>', 'the role they join with')
        .choices(WORKSPACE_ROLES.filter((r) => r !== 'owner'))
        .makeOptionMandatory(),
    )
    .option('--email <email>', 'whom it is for (a note; anyone with the link may accept it)')
    .option('--expires-in-days <days>', 'default 7, at most 30', days)
    .action(act(invite));
  leaf(command, 'invitations', 'its invitations, newest first, without secrets (maintainer)').action(act(invitations));
  leaf(command, 'revoke-invitation', 'revoke an invitation not yet accepted (maintainer)')
    .argument('<invitation_id>')
    .action(act(revokeInvitation));
  leaf(
    command,
    'accept',
    'join a workspace with an invitation link (read from stdin, or pasted at a hidden prompt)',
  ).action(act(accept));
}
