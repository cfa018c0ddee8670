import { readFileSync } from 'node:fs';
import { Argument, type Command, InvalidArgumentError, Option } from 'commander';
import type { CreateTaskBody } from '@emend/client';
import type { Feedback } from './api.js';
import { followTask } from './follow.js';
import { EXIT, type Output, coloredDiff, elapsed, oneLine, paintStatus, printJson, table } from './output.js';
import { type Act, type RemoteContext, leaf } from './context.js';
import { TASK_STATUSES } from '../../tasks/states.js';
import { FIXER_KINDS, type FixerKind } from '../../config/config.js';
import type { FixAttempt, FixerOutput, Log, Task, TaskStatus } from '@emend/client';
import { attemptCount } from './repos.js';

interface CreateFlags {
  repo?: string;
  prompt?: string;
  promptFile?: string;
  base?: string;
  scaffold?: boolean;
  manual?: boolean;
  fixer?: FixerKind;
  attempts?: number;
  follow?: boolean;
  json?: boolean;
}

/** The body of POST /v1/tasks from the flags; a wrong combination is a usage error (cmd.error). */
function createBody(flags: CreateFlags, cmd: Command): CreateTaskBody {
  if ((flags.prompt === undefined) === (flags.promptFile === undefined))
    cmd.error('task create needs one of --prompt and --prompt-file', { exitCode: EXIT.usage });
  if (flags.scaffold && flags.repo) cmd.error('a --scaffold task takes no --repo', { exitCode: EXIT.usage });
  if (!flags.scaffold && !flags.repo) cmd.error('task create needs --repo (or --scaffold)', { exitCode: EXIT.usage });
  if (flags.scaffold && flags.fixer) cmd.error('a --scaffold task takes no --fixer', { exitCode: EXIT.usage });
  if (flags.scaffold && flags.attempts !== undefined)
    cmd.error('a --scaffold task takes no --attempts', { exitCode: EXIT.usage });
  let prompt = flags.prompt;
  if (flags.promptFile !== undefined) {
    try {
      prompt = readFileSync(flags.promptFile, 'utf8');
    } catch (err) {
      cmd.error(`cannot read the prompt file: ${(err as Error).message}`, { exitCode: EXIT.usage });
    }
  }
  return {
    prompt: prompt!,
    ...(flags.repo ? { repo_url: flags.repo } : {}),
    ...(flags.base ? { base_branch: flags.base } : {}),
    ...(flags.scaffold ? { task_type: 'scaffold' as const } : {}),
    ...(flags.manual ? { approval_mode: 'manual' as const } : {}),
    ...(flags.fixer ? { fixer: flags.fixer } : {}),
    ...(flags.attempts !== undefined ? { attempts: flags.attempts } : {}),
  };
}

async function create(ctx: RemoteContext, cmd: Command): Promise<number> {
  const flags = cmd.opts<CreateFlags>();
  const body = createBody(flags, cmd);
  const task = await ctx.api().createTask(body);
  return afterStart(ctx, task, flags.follow === true, 'created');
}

/**
 * Prints a task just made and follows it when asked. With --json and --follow the task is the
 * first line, `{"type":"created"|"continued","data":…}`, in the shape of the stream's events.
 */
async function afterStart(
  ctx: RemoteContext,
  task: Task,
  follow: boolean,
  how: 'created' | 'continued',
): Promise<number> {
  const { o } = ctx;
  const verb = how === 'created' ? 'created task' : 'continued as task';
  if (o.json) o.out(follow ? JSON.stringify({ type: how, data: task }) : JSON.stringify(task, null, 2));
  else o.out(`${verb} ${task.id} (${task.task_type}, ${task.mode}, ${paintStatus(task.status, o.color)})`);
  if (!follow) return EXIT.ok;
  return followTask(ctx.api(), task.id, o, { gates: true });
}

async function list(ctx: RemoteContext, cmd: Command): Promise<number> {
  const flags = cmd.opts<{ status?: TaskStatus; repo?: string; limit?: number; mine?: boolean }>();
  const tasks = await ctx.api().listTasks({
    ...(flags.status ? { status: flags.status } : {}),
    ...(flags.repo ? { repo_url: flags.repo } : {}),
    ...(flags.limit ? { limit: flags.limit } : {}),
    ...(flags.mine ? { created_by: (await ctx.api().me()).id } : {}),
  });
  if (ctx.o.json) return printJson(ctx.o, tasks);
  if (tasks.length === 0) {
    ctx.o.out('no tasks');
    return EXIT.ok;
  }
  const rows = tasks.map((t) => [t.id, t.status, t.created_at.slice(0, 16).replace('T', ' '), oneLine(t.prompt, 60)]);
  for (const line of table([['ID', 'STATUS', 'CREATED', 'PROMPT'], ...rows])) ctx.o.out(line);
  return EXIT.ok;
}

function logRows(logs: Log[]): string[] {
  const rows = logs.map((l) => [
    l.created_at.slice(11, 19),
    l.step,
    l.status,
    l.status === 'running' ? '' : elapsed(l.duration_ms),
  ]);
  return table([['TIME', 'STEP', 'STATUS', 'TOOK'], ...rows]);
}

function taskFields(task: Task, o: Output): string[] {
  const fields: [string, string | null][] = [
    ['id', task.id],
    ['status', paintStatus(task.status, o.color)],
    [
      'type',
      `${task.task_type} (${task.mode}, approval ${task.approval_mode}, ${task.fixer} fixer` +
        `${task.attempts > 1 ? `, ${task.attempts} attempts` : ''})`,
    ],
    ['repo', task.repo_url && `${task.repo_url} @ ${task.base_branch}`],
    ['prompt', oneLine(task.prompt, 200)],
    ['pr', task.pr_url],
    ['site', task.deployed_url],
    ['error', task.error],
    ['cost', `$${task.cost_usd.toFixed(4)}, ${task.tokens_total} tokens`],
    ['took', task.duration_ms === null ? null : elapsed(task.duration_ms)],
    ['created', task.created_at],
  ];
  return table(fields.filter((f): f is [string, string] => f[1] !== null && f[1] !== '').map(([k, v]) => [`${k}:`, v]));
}

/**
 * A task's attempts (docs/agent.md, "Attempts"), from its last fixer record that has them: one
 * row each (its fixer and temperature, verdict, size, cost) and why the chosen one was.
 */
/** The attempts' record: the last finished fixer record that has them (a retry's record has none). */
function attemptsOutput(logs: Log[]): FixerOutput | undefined {
  const records = logs.filter((l) => l.step === 'fixer' && l.status !== 'running' && l.output.attempts);
  return records.at(-1)?.output as FixerOutput | undefined;
}

export function attemptRows(logs: Log[]): string[] {
  const output = attemptsOutput(logs);
  if (!output?.attempts) return [];
  const verdict = (a: FixAttempt) =>
    a.status === 'failed'
      ? `error: ${oneLine(a.error ?? '', 50)}`
      : a.passed === null
        ? 'no tests'
        : a.passed
          ? 'passed'
          : `failed (${a.new_failure_count} new)`;
  const rows = output.attempts.map((a) => [
    `${a.chosen ? '*' : ' '}${a.attempt}`,
    `${a.fixer} @${a.temperature}`,
    verdict(a),
    `+${a.lines_added} -${a.lines_removed}`,
    `$${a.cost_usd.toFixed(4)}`,
  ]);
  return [
    ...table([['ATTEMPT', 'FIXER', 'VERDICT', 'LINES', 'COST'], ...rows]),
    ...(output.choice ? [`chosen: ${output.choice.reason}`] : []),
  ];
}

async function show(ctx: RemoteContext, cmd: Command): Promise<number> {
  const got = await ctx.api().getTask(cmd.args[0]!);
  if (ctx.o.json) return printJson(ctx.o, got);
  const attempts = attemptRows(got.logs);
  const lines = [
    ...taskFields(got.task, ctx.o),
    ...(attempts.length ? ['', ...attempts] : []),
    '',
    ...logRows(got.logs),
  ];
  for (const line of lines) ctx.o.out(line);
  return EXIT.ok;
}

/** `emend task diff ID --attempt N`: that attempt's whole diff, from the fixer's record. */
function attemptDiff(logs: Log[], n: number): string | undefined {
  return attemptsOutput(logs)?.attempts?.find((a) => a.attempt === n)?.diff;
}

async function logs(ctx: RemoteContext, cmd: Command): Promise<number> {
  const id = cmd.args[0]!;
  if (cmd.opts<{ follow?: boolean }>().follow) return followTask(ctx.api(), id, ctx.o, { gates: true });
  const got = await ctx.api().getTask(id);
  if (ctx.o.json) return printJson(ctx.o, got.logs);
  for (const line of logRows(got.logs)) ctx.o.out(line);
  return EXIT.ok;
}

async function diff(ctx: RemoteContext, cmd: Command): Promise<number> {
  const { task, logs } = await ctx.api().getTask(cmd.args[0]!);
  const n = cmd.opts<{ attempt?: number }>().attempt;
  if (n !== undefined) {
    const whole = attemptDiff(logs, n);
    if (ctx.o.json) return printJson(ctx.o, { id: task.id, attempt: n, diff: whole ?? null });
    if (whole === undefined) ctx.o.err(`task ${task.id} has no attempt ${n} with a diff`);
    else ctx.o.out(coloredDiff(whole.trimEnd(), ctx.o.color));
    return EXIT.ok;
  }
  if (ctx.o.json) return printJson(ctx.o, { id: task.id, diff: task.diff_summary });
  if (!task.diff_summary) ctx.o.err(`task ${task.id} has no diff (${task.status})`);
  else ctx.o.out(coloredDiff(task.diff_summary.trimEnd(), ctx.o.color));
  return EXIT.ok;
}

/** approve, kill: a call that answers the task as it now is. */
function stateChange(verb: string, call: (ctx: RemoteContext, cmd: Command) => Promise<Task>) {
  return async (ctx: RemoteContext, cmd: Command) => {
    const task = await call(ctx, cmd);
    if (ctx.o.json) return printJson(ctx.o, task);
    ctx.o.out(`${verb} task ${task.id}: ${paintStatus(task.status, ctx.o.color)}`);
    return EXIT.ok;
  };
}

async function continueTask(ctx: RemoteContext, cmd: Command): Promise<number> {
  const child = await ctx.api().continueTask(cmd.args[0]!);
  return afterStart(ctx, child, cmd.opts<{ follow?: boolean }>().follow === true, 'continued');
}

async function feedback(ctx: RemoteContext, cmd: Command): Promise<number> {
  const flags = cmd.opts<Feedback & { json?: boolean }>();
  const body: Feedback = { rating: flags.rating, correct: flags.correct, reuse: flags.reuse, note: flags.note };
  if (Object.values(body).every((v) => v === undefined))
    cmd.error('task feedback needs --rating, --correct, --reuse or --note', { exitCode: EXIT.usage });
  const saved = await ctx.api().feedback(cmd.args[0]!, body);
  if (ctx.o.json) return printJson(ctx.o, saved);
  ctx.o.out(`feedback saved for task ${cmd.args[0]}`);
  return EXIT.ok;
}

async function remove(ctx: RemoteContext, cmd: Command): Promise<number> {
  // 204, no body: what was deleted is what was asked.
  await ctx.api().deleteTask(cmd.args[0]!);
  if (ctx.o.json) return printJson(ctx.o, { id: cmd.args[0], deleted: true });
  ctx.o.out(`deleted task ${cmd.args[0]}`);
  return EXIT.ok;
}

function limit(value: string): number {
  if (!/^[1-9]\d*$/.test(value) || Number(value) > 100)
    throw new InvalidArgumentError(`expects an integer from 1 to 100, got "${value}"`);
  return Number(value);
}

function rating(value: string): number {
  if (!/^[0-5]$/.test(value)) throw new InvalidArgumentError(`expects an integer from 0 to 5, got "${value}"`);
  return Number(value);
}

/** `emend task ...`: the task's life from the command line. */
export function taskCommands(program: Command, act: Act): void {
  const task = program.command('task').description('create, follow and act on tasks');
  leaf(task, 'create', 'create a task')
    .option('--repo <url>', 'the repository (fix tasks)')
    .option('--prompt <text>', 'what to change, 3 to 2000 characters')
    .option('--prompt-file <file>', 'read the prompt from a file')
    .option('--base <branch>', 'the branch to start from (default main)')
    .option('--scaffold', 'scaffold a site instead of fixing a repository')
    .option('--manual', 'stop at the plan and diff gates for approval')
    .addOption(
      new Option('--fixer <fixer>', "fix tasks: the fixer to run (default: your account's, else the server's)").choices(
        FIXER_KINDS,
      ),
    )
    .option(
      '--attempts <n>',
      'fix tasks: fixer attempts, the validator choosing (default: the repository’s setting, else 1; at most the plan’s)',
      attemptCount,
    )
    .option('--follow', 'show progress until the task ends; the exit code says how it ended')
    .action(act(create));
  leaf(task, 'list', "the workspace's tasks, newest first (the last 100 unless --limit)")
    .addOption(new Option('--status <status>', 'only tasks in this status').choices(TASK_STATUSES))
    .option('--repo <url>', 'only tasks on this repository')
    .option('--mine', 'only the tasks you asked for')
    .option('--limit <n>', 'at most this many (1 to 100)', limit)
    .action(act(list));
  leaf(task, 'show', 'a task and its step logs').argument('<id>').action(act(show));
  leaf(task, 'logs', "a task's step logs")
    .argument('<id>')
    .option('--follow', 'stream until the end')
    .action(act(logs));
  leaf(task, 'diff', "the task's diff (first 4 KB), or one attempt's whole diff")
    .argument('<id>')
    .option('--attempt <n>', "that attempt's whole diff (a task of several attempts)", attemptCount)
    .action(act(diff));
  leaf(task, 'approve', 'approve a task waiting at its plan or diff gate')
    .argument('<id>')
    .addArgument(new Argument('<stage>').choices(['plan', 'diff']))
    .action(
      act(stateChange('approved', async (ctx, cmd) => ctx.api().approve(cmd.args[0]!, cmd.args[1] as 'plan' | 'diff'))),
    );
  leaf(task, 'kill', 'force-stop a task')
    .argument('<id>')
    .action(act(stateChange('killed', async (ctx, cmd) => ctx.api().kill(cmd.args[0]!))));
  leaf(task, 'continue', 'promote a finished preview to a pull-request run (a new task)')
    .argument('<id>')
    .option('--follow', 'follow the new task')
    .action(act(continueTask));
  leaf(task, 'feedback', "rate a task's result; it tunes later runs on the repository")
    .argument('<id>')
    .option('--rating <n>', 'an integer from 0 to 5', rating)
    .addOption(new Option('--correct <answer>', 'was the change right').choices(['yes', 'partial', 'no']))
    .addOption(new Option('--reuse <answer>', 'may it be reused as an example').choices(['yes', 'no']))
    .option('--note <text>', 'a free-text note')
    .action(act(feedback));
  leaf(task, 'delete', 'delete a finished task, its logs and its feedback (kill a running one first)')
    .argument('<id>')
    .action(act(remove));
}
