import { EmendError } from '@emend/client';
import { Command, CommanderError } from 'commander';
import { connect } from './api.js';
import { type Act, leaf } from './context.js';
import { accountCommands } from './account.js';
import { RemoteConfigError, resolveLogin } from './config.js';
import { CancelledInput, login, loginWithSso, logout } from './login.js';
import { EXIT, makeOutput } from './output.js';
import { repoCommands } from './repos.js';
import { setupCommands } from './setup.js';
import { taskCommands } from './tasks.js';
import { webhookCommands } from './webhooks.js';
import { workspaceCommands } from './workspaces.js';

/** The server a command talked to, for an error that says it could not be reached. */
interface Reached {
  server?: string;
}

function buildProgram(env: NodeJS.ProcessEnv, setCode: (code: number) => void, reached: Reached): Command {
  const program = new Command('emend')
    .exitOverride()
    .showHelpAfterError('(add --help for usage)')
    .configureOutput({ outputError: (text, write) => write(`emend: ${text.replace(/^error: /, '')}`) });
  const act: Act =
    (run) =>
    async (...args) => {
      const cmd = args.at(-1) as Command;
      const o = makeOutput(env, cmd.opts<{ json?: boolean }>().json === true);
      const api = () => {
        const login = resolveLogin(env);
        reached.server = login.server;
        return connect(login);
      };
      setCode(await run({ env, o, api }, cmd));
    };
  leaf(program, 'login', 'check a token against the server and save both (or sign in through single sign-on)')
    .requiredOption('--server <url>', "the server's base address")
    .option('--sso', 'sign in through single sign-on in a browser instead of giving a token')
    .option('--email <email>', 'with --sso: your work email, which finds your organisation’s identity provider')
    .option('--workspace <id>', 'with --sso: the workspace whose identity provider to use')
    .action(
      act((ctx, cmd) => {
        const opts = cmd.opts<{ server: string; sso?: boolean; email?: string; workspace?: string }>();
        reached.server = opts.server;
        if (opts.sso)
          return loginWithSso(ctx.env, ctx.o, opts.server, { email: opts.email, workspace: opts.workspace });
        return login(ctx.env, ctx.o, reached.server);
      }),
    );
  leaf(program, 'logout', 'forget the saved login').action(act(async (ctx) => logout(ctx.env, ctx.o)));
  taskCommands(program, act);
  accountCommands(program, act);
  repoCommands(program, act);
  webhookCommands(program, act);
  workspaceCommands(program, act);
  setupCommands(program, act);
  return program;
}

/** `emend login|logout|task|me|keys|tokens|repo|webhooks|workspaces|scm|triggers|settings ...`; returns the exit code (docs/client.md lists them). */
export async function remoteCommand(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let code: number = EXIT.ok;
  const reached: Reached = {};
  const program = buildProgram(
    env,
    (c) => {
      code = c;
    },
    reached,
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    return reportError(err, reached.server);
  }
}

/** One line on stderr for every failure, never a stack: the server's message, code and request id. */
export function reportError(err: unknown, server?: string): number {
  if (err instanceof CommanderError) {
    // Commander has printed its message (or the help) already.
    return err.code === 'commander.helpDisplayed' || err.code === 'commander.help' ? EXIT.ok : EXIT.usage;
  }
  if (err instanceof EmendError) {
    const where = [
      err.code,
      err.status ? `HTTP ${err.status}` : systemCode(err.cause),
      err.requestId ? `request ${err.requestId}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    const wait = err.retryAfter !== undefined ? `; retry after ${err.retryAfter}s` : '';
    // No answer at all: say which address was tried (a wrong EMEND_SERVER or a stopped server).
    const message =
      err.code === 'network' && server
        ? err.message.replace('the emend server', `the emend server at ${server}`)
        : err.message;
    process.stderr.write(`emend: ${message} (${where})${wait}\n`);
    return EXIT.api;
  }
  if (err instanceof RemoteConfigError) {
    process.stderr.write(`emend: ${err.message}\n`);
    return EXIT.config;
  }
  if (err instanceof CancelledInput) return EXIT.interrupted;
  process.stderr.write(`emend: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.internal;
}

/** Why no answer came (ECONNREFUSED, ENOTFOUND…): fetch wraps the system error in its own. */
function systemCode(cause: unknown): string {
  for (let c = cause, depth = 0; c instanceof Error && depth < 4; c = c.cause, depth++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return '';
}
