import { type Command, InvalidArgumentError, Option } from 'commander';
import type { RepoSettingsPatch } from './api.js';
import { type Act, type RemoteContext, leaf } from './context.js';
import { readSecret } from './login.js';
import { EXIT, show, showList, table } from './output.js';

interface RepoSettingsJson {
  repo: string;
  setup_command: string | null;
  test_command: string | null;
  env: Record<string, string>;
  attempts: number | null;
  secrets: { name: string; updated_at: string }[];
}

const repoFlag = () =>
  new Option('--repo <url>', 'the repository URL, as in `emend task create`').makeOptionMandatory();

/** `--env NAME=VALUE`, repeatable. */
function assignment(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const at = value.indexOf('=');
  if (at <= 0) throw new InvalidArgumentError(`expects NAME=VALUE, got "${value}"`);
  return { ...previous, [value.slice(0, at)]: value.slice(at + 1) };
}
const names = (value: string, previous: string[] = []) => [...previous, value];

/** `--attempts N`: a whole number from 1; the server holds it to the plan's limit. */
export function attemptCount(value: string): number {
  if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError(`expects a whole number from 1, got "${value}"`);
  return Number(value);
}

function settingsLines(s: RepoSettingsJson): string[] {
  const env = Object.entries(s.env);
  return table([
    ['repository:', s.repo],
    ['setup:', s.setup_command ?? '(none)'],
    ['test:', s.test_command ?? '(none)'],
    ['env:', env.length === 0 ? '(none)' : env.map(([k, v]) => `${k}=${v}`).join(' ')],
    ['attempts:', s.attempts === null ? '1 (default)' : String(s.attempts)],
    ['secrets:', s.secrets.length === 0 ? '(none)' : s.secrets.map((x) => x.name).join(', ')],
  ]);
}

async function list(ctx: RemoteContext): Promise<number> {
  const repos = await ctx.api().listRepoSettings();
  return showList(ctx, repos, {
    header: ['REPOSITORY', 'SECRETS', 'UPDATED'],
    row: (r) => [r.repo, String(r.secret_count), r.updated_at],
    empty: 'no repository settings',
  });
}

async function settingsShow(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { repo } = cmd.opts<{ repo: string }>();
  return show(ctx, await ctx.api().getRepoSettings(repo), settingsLines);
}

async function settingsSet(ctx: RemoteContext, cmd: Command): Promise<number> {
  const f = cmd.opts<{
    repo: string;
    setup?: string;
    test?: string;
    env?: Record<string, string>;
    attempts?: number;
  }>();
  const patch: RepoSettingsPatch = {
    ...(f.setup !== undefined ? { setup_command: f.setup } : {}),
    ...(f.test !== undefined ? { test_command: f.test } : {}),
    ...(f.env ? { env: f.env } : {}),
    ...(f.attempts !== undefined ? { attempts: f.attempts } : {}),
  };
  if (Object.keys(patch).length === 0) {
    ctx.o.err('emend: nothing to set (give --setup, --test, --env NAME=VALUE or --attempts N)');
    return EXIT.usage;
  }
  return show(ctx, await ctx.api().updateRepoSettings(f.repo, patch), settingsLines);
}

async function settingsUnset(ctx: RemoteContext, cmd: Command): Promise<number> {
  const f = cmd.opts<{
    repo: string;
    setup?: boolean;
    test?: boolean;
    env?: string[];
    attempts?: boolean;
    all?: boolean;
  }>();
  if (f.all) {
    const gone = await ctx.api().deleteRepoSettings(f.repo);
    return show(ctx, gone, () => [`deleted the settings and secrets of ${f.repo}`]);
  }
  const patch: RepoSettingsPatch = {
    ...(f.setup ? { setup_command: null } : {}),
    ...(f.test ? { test_command: null } : {}),
    ...(f.env ? { env: Object.fromEntries(f.env.map((n) => [n, null])) } : {}),
    ...(f.attempts ? { attempts: null } : {}),
  };
  if (Object.keys(patch).length === 0) {
    ctx.o.err('emend: nothing to unset (give --setup, --test, --env NAME, --attempts or --all)');
    return EXIT.usage;
  }
  return show(ctx, await ctx.api().updateRepoSettings(f.repo, patch), settingsLines);
}

async function secretsList(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { repo } = cmd.opts<{ repo: string }>();
  const secrets = await ctx.api().listRepoSecrets(repo);
  return showList(ctx, secrets, {
    header: ['NAME', 'CREATED', 'UPDATED'],
    row: (s) => [s.name, s.created_at, s.updated_at],
    empty: 'no secrets for this repository',
  });
}

async function secretsSet(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { repo } = cmd.opts<{ repo: string }>();
  const name = cmd.args[0]!;
  // Never from the command line (it would sit in the shell's history and in ps): stdin or a hidden prompt.
  const value = await readSecret(`value of ${name}`);
  if (value === '') {
    ctx.o.err('emend: no value given (pipe it on stdin or type it at the prompt)');
    return EXIT.usage;
  }
  const saved = await ctx.api().saveRepoSecret(repo, { name, value });
  return show(ctx, saved, (s) => [`saved the secret ${s.name} for ${repo} (the setup phase sees it)`]);
}

async function secretsDelete(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { repo } = cmd.opts<{ repo: string }>();
  const gone = await ctx.api().deleteRepoSecret(repo, cmd.args[0]!);
  return show(ctx, gone, (g) => [`deleted the secret ${g.name} for ${repo}`]);
}

/** `emend repo list`, `emend repo settings show|set|unset`, `emend repo secrets list|set|delete` (docs/environments.md). */
export function repoCommands(program: Command, act: Act): void {
  const repo = program.command('repo').description('per-repository settings and setup-only secrets');
  leaf(repo, 'list', 'the repositories you have settings or secrets for').action(act(list));
  const settings = repo
    .command('settings')
    .description('setup command, test command, environment variables and default attempts');
  leaf(settings, 'show', "a repository's settings (secrets by name only)")
    .addOption(repoFlag())
    .action(act(settingsShow));
  leaf(settings, 'set', 'set commands or variables; the rest stay as they are')
    .addOption(repoFlag())
    .option('--setup <command>', 'run in the setup phase, after the detected install')
    .option('--test <command>', 'the test command (before .emend/test, memory and detection)')
    .option('--env <NAME=VALUE>', 'a variable for both phases (repeatable)', assignment)
    .option(
      '--attempts <n>',
      "fixer attempts of the repository's fix tasks that name none (docs/agent.md)",
      attemptCount,
    )
    .action(act(settingsSet));
  leaf(settings, 'unset', 'clear commands or variables')
    .addOption(repoFlag())
    .option('--setup', 'clear the setup command')
    .option('--test', 'clear the test command')
    .option('--env <NAME>', 'remove a variable (repeatable)', names)
    .option('--attempts', 'clear the default attempts (back to 1)')
    .option('--all', "delete the repository's settings and secrets")
    .action(act(settingsUnset));
  const secrets = repo.command('secrets').description('setup-only secrets, e.g. a private registry token');
  leaf(secrets, 'list', 'secrets by name, never their values').addOption(repoFlag()).action(act(secretsList));
  leaf(secrets, 'set', 'save a secret; its value is read from stdin (or typed at a hidden prompt)')
    .addOption(repoFlag())
    .argument('<name>')
    .action(act(secretsSet));
  leaf(secrets, 'delete', 'delete a secret').addOption(repoFlag()).argument('<name>').action(act(secretsDelete));
}
