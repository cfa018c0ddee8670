import { parseArgs } from 'node:util';
import { systemClock } from '../clock.js';
import { ASSIGNABLE_BILLING_PLANS, type BillingPlanName } from '../config/billing-plans.js';
import { type Config, loadConfig } from '../config/config.js';
import { ConfigError } from '../config/error.js';
import type { Db } from '../db/client.js';
import { AppError } from '../errors.js';

// The heavy modules (the app, the database drivers) load when a command needs them, so a
// usage or configuration error answers at once.

const USAGE = `usage:
  emend serve [--port N] [--host H] [--no-worker]
  emend worker
  emend migrate
  emend backup FILE   (the embedded database and its secret.key, also while the server runs)
  emend restore FILE [--force]   (into a stopped, empty data dir; --force replaces its database)
  emend audit verify [--workspace ID]   (checks the audit log's hash chains; exits 1 at a broken link)
  emend audit fold   (folds rows older than EMEND_AUDIT_RETENTION_DAYS into summary rows, now)
  emend accounts create --email E [--name N] [--plan free|pro|scale] [--credits N] [--admin]
  emend accounts set --email E [--plan P] [--credits N]
  emend accounts token --email E [--name N] [--expires-in-days D]   (a new token; shown once)
  emend sandbox exec --workdir DIR [--timeout S] [--network] -- CMD...
  emend validate --repo DIR [--base REV] [--json]
  emend env list [--json] | purge (--all | KEY | --repo URL)
  emend locate --repo DIR --prompt-file F [--top N] [--json]
  emend eval --dataset F (--oracle | --baseline) [--limit N] [--concurrency K] [--out DIR] [--resume]
             [--mirrors DIR] [--clone-url URL] [--setup FILE.json]

A server, from anywhere (docs/client.md; \`emend task --help\` and the like for every flag):
  emend login --server URL   (the token on stdin, or typed at a hidden prompt; --sso [--email E]: single sign-on in a browser)   emend logout
  emend task create --repo URL (--prompt TEXT | --prompt-file F) [--base B] [--scaffold] [--manual]
                    [--fixer pipeline|agent] [--follow]
  emend task list | show ID | logs ID [--follow] | diff ID | approve ID plan|diff | kill ID
  emend task continue ID [--follow] | feedback ID [--rating N] [--correct C] [--note T] | delete ID
  emend me | keys list|add|test|delete | tokens list|create|revoke      (each takes --json)
  emend repo list | settings show|set|unset --repo URL | secrets list|set|delete --repo URL [NAME]
  emend webhooks list|add|enable|disable|remove|test|deliveries|redeliver
  emend scm connect|oauth|confirm|disconnect [--host H]   (the token on stdin, or typed at a hidden prompt)
  emend triggers show|on|off --repo URL   emend settings show | set [--fixer F] [--approval auto|manual]
  emend workspaces list|create|show|rename|delete|export|members|role|remove|leave|transfer
                   |invite|invitations|revoke-invitation|accept   (docs/teams.md)
  A followed task exits 0 done, 1 failed, 2 cancelled.

The commands that open the database (accounts, audit, migrate, backup, restore) take --data-dir DIR (or EMEND_DATA_DIR;
default ./data where the command runs) and name it on stderr; they refuse to create a new ./data
while an emend server answers on PORT (it keeps its data elsewhere).
Configuration comes from the environment; see docs/configuration.md.`;

/** The local commands whose --help prints their lines of USAGE. */
const LOCAL = [
  'serve',
  'worker',
  'migrate',
  'backup',
  'restore',
  'audit',
  'accounts',
  'sandbox',
  'validate',
  'env',
  'locate',
  'eval',
];

/** A command's lines of USAGE (with their continuation lines), for `emend CMD --help`. */
function usageOf(command: string): string {
  const lines = USAGE.split('\n');
  const out: string[] = [];
  let inside = false;
  for (const line of lines) {
    if (line.startsWith('  emend ')) inside = line.startsWith(`  emend ${command} `) || line === `  emend ${command}`;
    else if (!line.startsWith('   ')) inside = false;
    if (inside) out.push(line);
  }
  const dataDir = ['accounts', 'audit', 'migrate', 'backup', 'restore'].includes(command)
    ? `\n\n${USAGE.split('\n').slice(-4, -1).join('\n')}`
    : '';
  return `usage:\n${out.join('\n')}${dataDir}\n\nConfiguration comes from the environment; see docs/configuration.md.`;
}

/** `--data-dir DIR` anywhere in a local command's arguments: EMEND_DATA_DIR for this run, given explicitly. */
function takeDataDir(args: string[], env: NodeJS.ProcessEnv): { args: string[]; env: NodeJS.ProcessEnv } {
  const at = args.findIndex((a) => a === '--data-dir' || a.startsWith('--data-dir='));
  if (at === -1) return { args, env };
  const inline = args[at]!.startsWith('--data-dir=') ? args[at]!.slice('--data-dir='.length) : undefined;
  const dir = inline ?? args[at + 1];
  if (!dir) throw new UsageError('--data-dir needs a directory');
  const rest = [...args.slice(0, at), ...args.slice(at + (inline !== undefined ? 1 : 2))];
  return { args: rest, env: { ...env, EMEND_DATA_DIR: dir } };
}

class UsageError extends Error {}

function nonNegativeInt(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} expects a non-negative integer, got "${value}"`);
  return Number(value);
}

const isAssignable = (value: string): value is (typeof ASSIGNABLE_BILLING_PLANS)[number] =>
  (ASSIGNABLE_BILLING_PLANS as readonly string[]).includes(value);

function plan(value: string | undefined): BillingPlanName | undefined {
  if (value === undefined) return undefined;
  if (!isAssignable(value)) {
    const names = `${ASSIGNABLE_BILLING_PLANS.slice(0, -1).join(', ')} or ${ASSIGNABLE_BILLING_PLANS.at(-1)}`;
    throw new UsageError(`--plan expects ${names}, got "${value}"`);
  }
  return value;
}

function configWithFlags(env: NodeJS.ProcessEnv, flags: { port?: string; host?: string }): Config {
  try {
    return loadConfig({
      ...env,
      ...(flags.port !== undefined ? { PORT: flags.port } : {}),
      ...(flags.host !== undefined ? { HOST: flags.host } : {}),
    });
  } catch (err) {
    // A bad --port is the caller's typo, not the environment's.
    if (err instanceof ConfigError && err.variable === 'PORT' && flags.port !== undefined)
      throw new UsageError(`--port ${err.message.slice('PORT: '.length)}`);
    throw err;
  }
}

async function serve(args: string[], env: NodeJS.ProcessEnv) {
  const { values } = parseArgs({
    args,
    options: { port: { type: 'string' }, host: { type: 'string' }, 'no-worker': { type: 'boolean' } },
  });
  const config = configWithFlags(env, values);
  return untilSignal(async () => {
    const { startServer } = await import('../server.js');
    return startServer(config, { worker: !values['no-worker'] });
  });
}

async function worker(args: string[], env: NodeJS.ProcessEnv) {
  parseArgs({ args, options: {} });
  const config = loadConfig(env);
  return untilSignal(async () => {
    const { startWorkerProcess } = await import('../server.js');
    return startWorkerProcess(config);
  });
}

/** Runs a long-lived process until SIGINT or SIGTERM, then closes it. */
async function untilSignal(start: () => Promise<{ close(): Promise<void> }>) {
  // Listen for signals from the start: one that arrives while the database opens stops the
  // server as soon as it is up, instead of killing it half-way. A second one exits at once.
  let stopRequested = false;
  let requestStop = () => {};
  const stopped = new Promise<void>((resolve) => {
    requestStop = resolve;
  });
  const onSignal = () => {
    if (stopRequested) process.exit(130);
    stopRequested = true;
    requestStop();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const running = await start();
    await stopped;
    await running.close();
    return 0;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}

async function withDatabase<T>(
  config: Config,
  env: NodeJS.ProcessEnv,
  fn: (deps: { db: Db; clock: typeof systemClock }) => Promise<T>,
) {
  const { refuseStrayDataDir, openedLine } = await import('./data-dir.js');
  await refuseStrayDataDir(config, env.EMEND_DATA_DIR !== undefined);
  const { openClientDatabase } = await import('../db/open.js');
  const database = await openClientDatabase(config);
  // Which database this was: a relative ./data depends on where the command ran.
  console.error(openedLine(config, database.pglite !== undefined));
  try {
    return await fn({ db: database.db, clock: systemClock });
  } finally {
    await database.close();
  }
}

async function accounts(args: string[], config: Config, env: NodeJS.ProcessEnv) {
  const [sub, ...rest] = args;
  if (sub !== 'create' && sub !== 'set' && sub !== 'token')
    throw new UsageError(
      sub === undefined ? 'accounts needs a command: create, set or token' : `unknown accounts command "${sub}"`,
    );
  const { values } = parseArgs({
    args: rest,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      plan: { type: 'string' },
      credits: { type: 'string' },
      admin: { type: 'boolean' },
      'expires-in-days': { type: 'string' },
    },
  });
  if (!values.email) throw new UsageError(`accounts ${sub} needs --email`);
  const email = values.email;
  if (sub === 'token') return accountToken(config, env, email, values);
  if (values['expires-in-days'] !== undefined) throw new UsageError('--expires-in-days is for accounts token');
  if (sub === 'create') {
    const input = {
      email,
      name: values.name,
      plan: plan(values.plan),
      credits: nonNegativeInt('--credits', values.credits),
      isAdmin: values.admin,
    };
    const { createAccount } = await import('../accounts/accounts.js');
    const { account, workspace, token } = await withDatabase(config, env, (deps) => createAccount(deps, input));
    // One JSON line on stdout, so scripts can read the token; the token is shown only here.
    console.log(
      JSON.stringify({
        id: account.id,
        email: account.email,
        plan: workspace.plan,
        credits: workspace.credits,
        token: token.secret,
      }),
    );
    return 0;
  }
  if (values.name !== undefined || values.admin !== undefined)
    throw new UsageError('accounts set takes --plan and --credits only');
  const change = { plan: plan(values.plan), credits: nonNegativeInt('--credits', values.credits) };
  if (change.plan === undefined && change.credits === undefined)
    throw new UsageError('accounts set needs --plan or --credits');
  const { findAccountByEmail, updateAccount } = await import('../accounts/accounts.js');
  const { account, workspace } = await withDatabase(config, env, async (deps) => {
    const found = await findAccountByEmail(deps, email);
    if (!found) throw new AppError('not_found', `no account with email ${email}`);
    return updateAccount(deps, found.account.id, change);
  });
  console.log(
    JSON.stringify({ id: account.id, email: account.email, plan: workspace.plan, credits: workspace.credits }),
  );
  return 0;
}

/**
 * `emend audit verify [--workspace ID]`: every workspace's chain (or one's) checked; one JSON line
 * (workspaces, rows, broken links) on stdout, each broken link on stderr, exit 1 when one is.
 * `emend audit fold`: retention now, as the worker does it periodically.
 */
async function audit(args: string[], config: Config, env: NodeJS.ProcessEnv) {
  const [sub, ...rest] = args;
  if (sub !== 'verify' && sub !== 'fold')
    throw new UsageError(
      sub === undefined ? 'audit needs a command: verify or fold' : `unknown audit command "${sub}"`,
    );
  const { values } = parseArgs({ args: rest, options: { workspace: { type: 'string' } } });
  if (sub === 'fold') {
    if (values.workspace !== undefined) throw new UsageError('audit fold takes no --workspace');
    if (!config.auditRetentionDays) throw new UsageError('audit fold needs EMEND_AUDIT_RETENTION_DAYS (1 or more)');
    const { applyAuditRetention } = await import('../audit/retention.js');
    const folded = await withDatabase(config, env, (deps) => applyAuditRetention({ ...deps, config }));
    console.log(JSON.stringify({ folded }));
    return 0;
  }
  if (
    values.workspace !== undefined &&
    !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(values.workspace)
  )
    throw new UsageError(`--workspace expects a workspace id (a uuid), got "${values.workspace}"`);
  const { verifyAudit } = await import('../audit/verify.js');
  const report = await withDatabase(config, env, (deps) => verifyAudit(deps.db, values.workspace));
  for (const b of report.broken)
    console.error(`audit chain broken: workspace ${b.workspaceId}, row ${b.seq}: ${b.reason}`);
  console.log(JSON.stringify({ ok: report.broken.length === 0, ...report }));
  return report.broken.length === 0 ? 0 : 1;
}

/**
 * `emend accounts token --email E`: a new full token of the account's, acting in its personal
 * workspace, for the operator to hand over when the owner lost theirs (they sign in with it and
 * revoke the lost one). The other tokens stay as they are. One JSON line, the secret shown only here.
 */
async function accountToken(
  config: Config,
  env: NodeJS.ProcessEnv,
  email: string,
  values: { name?: string; plan?: string; credits?: string; admin?: boolean; 'expires-in-days'?: string },
) {
  if (values.plan !== undefined || values.credits !== undefined || values.admin !== undefined)
    throw new UsageError('accounts token takes --name and --expires-in-days only');
  const days = nonNegativeInt('--expires-in-days', values['expires-in-days']);
  if (days !== undefined && (days < 1 || days > 3650))
    throw new UsageError(`--expires-in-days expects 1 to 3650, got "${days}"`);
  const name = values.name ?? 'issued by emend accounts token';
  const { findAccountByEmail } = await import('../accounts/accounts.js');
  const { createPersonalToken } = await import('../accounts/token-store.js');
  const { found, token } = await withDatabase(config, env, async (deps) => {
    const found = await findAccountByEmail(deps, email);
    if (!found) throw new AppError('not_found', `no account with email ${email}`);
    const token = await createPersonalToken(
      deps,
      { accountId: found.account.id, workspaceId: found.workspace.id },
      name,
      days,
    );
    return { found, token };
  });
  console.log(
    JSON.stringify({
      id: found.account.id,
      email: found.account.email,
      workspace_id: found.workspace.id,
      token_id: token.record.id,
      name: token.record.name,
      expires_at: token.record.expiresAt?.toISOString() ?? null,
      token: token.secret,
    }),
  );
  return 0;
}

/** Entry point of the `emend` bin; returns the exit code. */
export async function main(argv: string[], givenEnv: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [command, ...givenArgs] = argv;
  try {
    if (command !== undefined && LOCAL.includes(command) && givenArgs.some((a) => a === '--help' || a === '-h')) {
      console.log(usageOf(command));
      return 0;
    }
    const { args, env } =
      command === 'accounts' || command === 'migrate' || command === 'backup' || command === 'restore'
        ? takeDataDir(givenArgs, givenEnv)
        : { args: givenArgs, env: givenEnv };
    switch (command) {
      case 'serve':
        return await serve(args, env);
      case 'worker':
        return await worker(args, env);
      case 'migrate': {
        parseArgs({ args, options: {} });
        await withDatabase(loadConfig(env), env, async () => {});
        console.log('migrations applied');
        return 0;
      }
      case 'backup':
        return await (await import('./backup.js')).backupCommand(args, env);
      case 'restore':
        return await (await import('./backup.js')).restoreCommand(args, env);
      case 'audit':
        return await audit(args, loadConfig(env), env);
      case 'accounts':
        return await accounts(args, loadConfig(env), env);
      case 'sandbox':
        return await (await import('./sandbox.js')).sandboxCommand(args, env);
      case 'validate':
        return await (await import('./validate.js')).validateCommand(args, env);
      case 'env':
        return await (await import('./env.js')).envCommand(args, env);
      case 'locate':
        return await (await import('./locate.js')).locateCommand(args, env);
      case 'eval':
        return await (await import('./eval.js')).evalCommand(args, env);
      // The remote commands: a server's API through @emend/client, with their own parser and exit codes.
      case 'login':
      case 'logout':
      case 'task':
      case 'me':
      case 'keys':
      case 'tokens':
      case 'repo':
      case 'webhooks':
      case 'workspaces':
      case 'scm':
      case 'triggers':
      case 'settings':
        return await (await import('./remote/program.js')).remoteCommand(argv, env);
      case 'help':
      case '--help':
      case '-h':
        console.log(USAGE);
        return 0;
      case undefined:
        throw new UsageError('no command given');
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`emend: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      console.error(`emend: bad configuration: ${err.message}`);
      return 78;
    }
    if (
      err instanceof AppError ||
      (err instanceof Error && (err.name === 'DataDirLockedError' || err.name === 'StrayDataDirError'))
    ) {
      console.error(`emend: ${err.message}`);
      return 1;
    }
    // node:util parseArgs: unknown option, option without its value, stray argument.
    if (err instanceof Error && String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) {
      console.error(`emend: ${err.message}\n\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}
