import { Argument, type Command, InvalidArgumentError, Option } from 'commander';
import { TOKEN_SCOPES, type TokenScope } from '../../db/access-vocabulary.js';
import { PROVIDERS, type Provider } from './api.js';
import { type Act, type RemoteContext, leaf } from './context.js';
import { readSecret } from './login.js';
import { EXIT, show, showList, table } from './output.js';

async function me(ctx: RemoteContext): Promise<number> {
  const profile = await ctx.api().me();
  return show(ctx, profile, (p) => {
    const keys = Array.isArray(p.api_keys) ? (p.api_keys as { provider: string }[]).map((k) => k.provider) : [];
    // A server from before workspaces answers none.
    const workspace = p.workspace as typeof p.workspace | undefined;
    return table([
      ['email:', p.email],
      ...(workspace
        ? [['workspace:', `${workspace.name} (${workspace.personal ? 'personal' : 'team'}, ${p.role}) ${workspace.id}`]]
        : []),
      ['plan:', `${p.plan}, ${p.credits} credits`],
      ['byok:', p.use_byok ? 'on' : 'off'],
      ['code host:', typeof p.scm === 'string' ? p.scm : 'not connected'],
      ['keys:', keys.length > 0 ? keys.join(', ') : 'none'],
    ]);
  });
}

async function keysList(ctx: RemoteContext): Promise<number> {
  const keys = await ctx.api().listKeys();
  return showList(ctx, keys, {
    header: ['PROVIDER', 'KEY', 'MODEL', 'BASE URL'],
    row: (k) => [k.provider, `…${k.last4}`, k.default_model ?? '', k.base_url ?? ''],
    empty: 'no provider keys saved',
  });
}

async function keysAdd(ctx: RemoteContext, cmd: Command): Promise<number> {
  const flags = cmd.opts<{ baseUrl?: string; defaultModel?: string }>();
  const provider = cmd.args[0] as Provider;
  const apiKey = await readSecret(`${provider} API key`);
  const saved = await ctx.api().saveKey({
    provider,
    api_key: apiKey,
    ...(flags.baseUrl ? { base_url: flags.baseUrl } : {}),
    ...(flags.defaultModel ? { default_model: flags.defaultModel } : {}),
  });
  return show(ctx, saved, (k) => [`saved the ${k.provider} key …${k.last4}`]);
}

async function keysTest(ctx: RemoteContext, cmd: Command): Promise<number> {
  const provider = cmd.args[0] as Provider;
  const apiKey = await readSecret(`${provider} API key`);
  const result = await ctx.api().testKey({ provider, api_key: apiKey });
  show(ctx, result, (r) => [r.ok ? `the key works: ${r.models} models` : `the key does not work: ${r.error}`]);
  return result.ok ? EXIT.ok : EXIT.failed;
}

async function keysDelete(ctx: RemoteContext, cmd: Command): Promise<number> {
  const answer = await ctx.api().deleteKey(cmd.args[0] as Provider);
  return show(ctx, answer, () => [`deleted the ${cmd.args[0]} key`]);
}

async function tokensList(ctx: RemoteContext): Promise<number> {
  const tokens = await ctx.api().listTokens();
  return showList(ctx, tokens, {
    header: ['ID', 'NAME', 'KEY', 'WORKSPACE', 'SCOPES', 'LAST USED', 'EXPIRES', 'REVOKED'],
    row: (t) => [
      t.id,
      t.name,
      `…${t.last4}`,
      t.workspace_id,
      t.scopes === null ? 'all' : t.scopes.join(','),
      t.last_used_at ?? '',
      t.expires_at ?? '',
      t.revoked_at ?? '',
    ],
  });
}

async function tokensCreate(ctx: RemoteContext, cmd: Command): Promise<number> {
  const flags = cmd.opts<{ name?: string; expiresInDays?: number; workspace?: string; scopes?: TokenScope[] }>();
  const made = await ctx.api().createToken({
    ...(flags.name ? { name: flags.name } : {}),
    ...(flags.expiresInDays ? { expires_in_days: flags.expiresInDays } : {}),
    ...(flags.workspace ? { workspace_id: flags.workspace } : {}),
    ...(flags.scopes ? { scopes: flags.scopes } : {}),
  });
  // The secret goes to stdout alone, so `emend tokens create | ...` pipes just the token.
  return show(ctx, made, (t) => {
    const scopes = t.scopes === null ? 'all its role allows' : t.scopes.join(', ');
    ctx.o.err(
      `token ${t.id} (${t.name}) for workspace ${t.workspace_id}, scopes: ${scopes}; the secret is shown once:`,
    );
    return [t.token];
  });
}

/** `--scopes tasks:read,tasks:write`: each a known scope. */
function scopes(value: string): TokenScope[] {
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(TOKEN_SCOPES as readonly string[]).includes(n));
  if (unknown.length > 0 || names.length === 0)
    throw new InvalidArgumentError(`unknown scope ${unknown.join(', ')}; scopes are ${TOKEN_SCOPES.join(', ')}`);
  return names as TokenScope[];
}

async function tokensRevoke(ctx: RemoteContext, cmd: Command): Promise<number> {
  const revoked = await ctx.api().revokeToken(cmd.args[0]!);
  return show(ctx, revoked, (t) => [`revoked token ${t.id} (${t.name})`]);
}

function days(value: string): number {
  if (!/^[1-9]\d{0,3}$/.test(value) || Number(value) > 3650)
    throw new InvalidArgumentError(`expects a whole number of days from 1 to 3650, got "${value}"`);
  return Number(value);
}

const provider = () => new Argument('<provider>').choices(PROVIDERS);

/** `emend me`, `emend keys ...`, `emend tokens ...`. */
export function accountCommands(program: Command, act: Act): void {
  leaf(program, 'me', 'your profile and the workspace this token acts in: plan, credits, code host, keys').action(
    act(me),
  );
  const keys = program.command('keys').description("your model providers' keys (bring your own key)");
  leaf(keys, 'list', 'saved keys, metadata only').action(act(keysList));
  leaf(keys, 'add', 'save a key (read from stdin, or typed at a hidden prompt)')
    .addArgument(provider())
    .addOption(new Option('--base-url <url>', "the provider's API address, to override"))
    .option('--default-model <model>', 'the model to use by default')
    .action(act(keysAdd));
  leaf(keys, 'test', "check a key against the provider's model list (read like add)")
    .addArgument(provider())
    .action(act(keysTest));
  leaf(keys, 'delete', 'delete a saved key').addArgument(provider()).action(act(keysDelete));
  const tokens = program.command('tokens').description('your personal access tokens');
  leaf(tokens, 'list', 'your tokens, without secrets').action(act(tokensList));
  leaf(tokens, 'create', 'issue a token; its secret is printed once')
    .option('--name <name>', 'a name to know it by')
    .option('--expires-in-days <days>', 'default: never expires', days)
    .option('--workspace <id>', "the workspace it acts in (emend workspaces list); default: this token's")
    .option('--scopes <names>', `comma-separated, narrower than your role: ${TOKEN_SCOPES.join(', ')}`, scopes)
    .action(act(tokensCreate));
  leaf(tokens, 'revoke', 'revoke a token').argument('<id>').action(act(tokensRevoke));
}
