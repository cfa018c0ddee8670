import * as prompts from '@clack/prompts';
import type { RemoteApi } from './api.js';
import { EXIT, type Output, coloredDiff, elapsed, paintStatus } from './output.js';
import type { Task, TaskEvent, TaskStatus } from '@emend/client';

/** How a followed task's end maps to the exit code (docs/client.md). */
export function exitCodeOf(status: TaskStatus): number {
  if (status === 'done') return EXIT.ok;
  if (status === 'cancelled') return EXIT.cancelled;
  return EXIT.failed;
}

/** What a view does with the stream: lines for a pipe, a spinner for a terminal, JSON for scripts. */
interface View {
  event(e: TaskEvent): void;
  /** Before a gate prompt or the last lines: no spinner may be drawing. */
  pause(): void;
  finish(task: Task): void;
  /** A gate reached (a pipe only: a terminal shows it with its prompt): what waits for approval. */
  gate?(stage: 'plan' | 'diff', task: Task, logs: readonly TaskLog[]): void;
}

type TaskLog = Awaited<ReturnType<RemoteApi['getTask']>>['logs'][number];

/**
 * An agent turn's line, from the `output.agent_turn` of a fixer's running record
 * (docs/agent.md): "turn 2: bash pytest -q (exit 1)". Null for any other record. Read field
 * by field: the contract gives the log's output no shape.
 */
function turnLine(output: Record<string, unknown>): string | null {
  const t = output.agent_turn;
  if (!t || typeof t !== 'object') return null;
  const field = (key: string): unknown => Reflect.get(t, key);
  const r = {
    turn: field('turn'),
    tool: field('tool'),
    action: field('action'),
    exit_code: field('exit_code'),
    ok: field('ok'),
  };
  const tool = typeof r.tool === 'string' ? r.tool : '?';
  const action = typeof r.action === 'string' && r.action ? ` ${r.action.split('\n', 1)[0]}` : '';
  const result =
    typeof r.exit_code === 'number'
      ? ` (exit ${r.exit_code})`
      : r.exit_code === null
        ? ' (no exit code, stopped)'
        : typeof r.ok === 'boolean'
          ? r.ok
            ? ' (ok)'
            : ' (failed)'
          : '';
  return `turn ${typeof r.turn === 'number' ? r.turn : '?'}: ${tool}${action}${result}`;
}

/**
 * An attempt's line when it ends (docs/agent.md, "Attempts"), from `output.attempt_done` of a
 * fixer's running record: "attempt 2: passed, +1 -1, $0.0012". Null for any other record.
 */
function attemptLine(output: Record<string, unknown>): string | null {
  const a = output.attempt_done;
  if (!a || typeof a !== 'object') return null;
  const field = (key: string): unknown => Reflect.get(a, key);
  const passed = field('passed');
  const verdict =
    field('status') === 'failed'
      ? `failed: ${String(field('error') ?? '').split('\n', 1)[0]}`
      : passed === true
        ? 'passed'
        : passed === false
          ? `did not pass (${Number(field('new_failure_count') ?? 0)} new failure(s))`
          : 'no verdict';
  const cost = typeof field('cost_usd') === 'number' ? `, $${(field('cost_usd') as number).toFixed(4)}` : '';
  return `attempt ${String(field('attempt') ?? '?')}: ${verdict}, +${Number(field('lines_added') ?? 0)} -${Number(field('lines_removed') ?? 0)}${cost}`;
}

/** A log's moment, for step durations measured on the server's clock (a replay shows the real ones). */
const at = (iso: string) => Date.parse(iso);

function stepLine(status: string, output: Record<string, unknown>, took: number | undefined) {
  const time = took === undefined ? '' : ` ${elapsed(took)}`;
  const why = status === 'failed' && typeof output.error === 'string' ? `: ${output.error}` : '';
  return { time, why };
}

function finalLine(task: Task, o: Output): string {
  const c = o.color;
  const parts = [paintStatus(task.status, c)];
  if (task.pr_url) parts.push(`PR ${task.pr_url}`);
  if (task.deployed_url) parts.push(`site ${task.deployed_url}`);
  if (task.error && task.status !== 'done') parts.push(task.error);
  if (task.cost_usd > 0) parts.push(`$${task.cost_usd.toFixed(4)}`);
  // A preview ends without a pull request: say how to get one from it.
  if (task.status === 'done' && task.mode === 'preview')
    parts.push(`a preview: \`emend task continue ${task.id}\` opens its pull request (a plan with credits)`);
  return parts.join(c.dim(' · '));
}

/**
 * Piped: one plain line per step start and end, per agent turn, per status change; at a gate the
 * plan or the diff that waits; the diff at the end (unless a gate showed that very diff).
 */
function plainView(o: Output, id: string): View {
  const started = new Map<string, number>();
  let status = '';
  let shownDiff: string | undefined;
  return {
    event(e) {
      if (e.type === 'log') {
        const { step, status: s, output, created_at } = e.data;
        const turn = s === 'running' ? turnLine(output) : null;
        if (turn) {
          // An attempt's turns name their attempt (several run side by side).
          o.out(`${step} ${typeof output.attempt === 'number' ? `attempt ${output.attempt} ` : ''}${turn}`);
          return;
        }
        const attempt = s === 'running' ? attemptLine(output) : null;
        if (attempt) {
          o.out(`${step} ${attempt}`);
          return;
        }
        if (s === 'running') started.set(step, at(created_at));
        const begun = started.get(step);
        const { time, why } = stepLine(
          s,
          output,
          s === 'running' || begun === undefined ? undefined : at(created_at) - begun,
        );
        o.out(`${step} ${s}${time}${why}`);
      } else if (e.type === 'state' && e.data.status !== status) {
        status = e.data.status;
        const hint = status.startsWith('awaiting_')
          ? `: approve with \`emend task approve ${id} ${status.slice('awaiting_'.length)}\``
          : '';
        o.out(`task ${status}${hint}`);
      }
    },
    pause() {},
    gate(stage, task, logs) {
      if (stage === 'plan') {
        o.out('plan:');
        for (const line of planText(planOf(logs)).split('\n')) o.out(`  ${line}`);
      } else if (task.diff_summary) {
        o.out(task.diff_summary.trimEnd());
        shownDiff = task.diff_summary;
      }
    },
    finish(task) {
      if (task.diff_summary && task.diff_summary !== shownDiff) o.out(task.diff_summary.trimEnd());
      o.out(finalLine(task, o));
    },
  };
}

/** --json: one JSON object per stream event, then the finished task. */
function jsonView(o: Output): View {
  return {
    event: (e) => o.out(JSON.stringify(e)),
    pause() {},
    finish: (task) => o.out(JSON.stringify({ type: 'task', data: task })),
  };
}

/** A terminal: a spinner with the running step and its seconds, a finished line per step. */
function ttyView(o: Output): View {
  const c = o.color;
  const started = new Map<string, number>();
  let spin: { step: string; spinner: prompts.SpinnerResult; timer: NodeJS.Timeout } | undefined;
  const stopSpin = () => {
    if (!spin) return undefined;
    clearInterval(spin.timer);
    const s = spin;
    spin = undefined;
    return s;
  };
  const startSpin = (step: string) => {
    stopSpin()?.spinner.clear();
    const spinner = prompts.spinner({ output: process.stdout });
    const begun = Date.now();
    const label = step === 'queued' ? 'waiting for a worker' : `${step} running`;
    spinner.start(label);
    // The running seconds are the local clock's: the spinner only has to show that time passes.
    const timer = setInterval(() => spinner.message(`${label} ${Math.floor((Date.now() - begun) / 1000)}s`), 1000);
    spin = { step, spinner, timer };
  };
  return {
    event(e) {
      // Until a worker takes the task, the spinner says it waits; the first step replaces it.
      if (e.type === 'state' && e.data.status === 'pending' && !spin) startSpin('queued');
      if (e.type === 'log') {
        const { step, status, output, created_at } = e.data;
        if (status === 'running') {
          started.set(step, at(created_at));
          startSpin(step);
          return;
        }
        const begun = started.get(step);
        const { time, why } = stepLine(status, output, begun === undefined ? undefined : at(created_at) - begun);
        const line = `${c.bold(step)} ${paintStatus(status, c)}${c.dim(time)}${why}`;
        const running = spin?.step === step ? stopSpin() : undefined;
        if (running) status === 'failed' ? running.spinner.error(line) : running.spinner.stop(line);
        else prompts.log.step(line, { output: process.stdout });
      }
    },
    pause() {
      stopSpin()?.spinner.clear();
    },
    finish(task) {
      stopSpin()?.spinner.clear();
      if (task.diff_summary) o.out(coloredDiff(task.diff_summary.trimEnd(), c));
      prompts.outro(finalLine(task, o), { output: process.stdout });
    },
  };
}

interface FollowOptions {
  /** Prompt at the plan and diff gates (a terminal only). */
  gates: boolean;
}

/**
 * Follows a task's stream to its end and returns the exit code its end status gives. On a
 * terminal a task waiting at a gate is shown (the plan, or the diff) and approved or killed from
 * here; elsewhere the waiting is one line saying how to approve it.
 */
export async function followTask(api: RemoteApi, id: string, o: Output, options: FollowOptions): Promise<number> {
  const view = o.json ? jsonView(o) : o.tty ? ttyView(o) : plainView(o, id);
  const asked = new Set<string>();
  let end: TaskStatus | undefined;
  const interrupted = guardInterrupt(o, id);
  try {
    for await (const e of api.follow(id)) {
      // Piped, what waits at a gate comes before the line saying how to approve it.
      if (e.type === 'state' && view.gate && !o.tty && isGate(e.data.status) && !asked.has(e.data.status)) {
        asked.add(e.data.status);
        const { task, logs } = await api.getTask(id);
        view.gate(gateStage(e.data.status), task, logs);
      }
      view.event(e);
      if (e.type === 'end') {
        end = e.data.status;
        break;
      }
      if (e.type === 'state' && o.tty && isGate(e.data.status) && !asked.has(e.data.status)) {
        asked.add(e.data.status);
        view.pause();
        // A prompt needs a keyboard: with stdin redirected the terminal only says how to approve.
        if (options.gates && process.stdin.isTTY) await askAtGate(api, id, e.data.status, o);
        else prompts.log.info(`waiting: \`emend task approve ${id} ${gateStage(e.data.status)}\``);
      }
    }
  } finally {
    interrupted.release();
  }
  const { task } = await api.getTask(id);
  view.finish(task);
  return exitCodeOf(end ?? task.status);
}

const isGate = (s: TaskStatus): s is 'awaiting_plan' | 'awaiting_diff' =>
  s === 'awaiting_plan' || s === 'awaiting_diff';

const gateStage = (status: 'awaiting_plan' | 'awaiting_diff') => (status === 'awaiting_plan' ? 'plan' : 'diff');

/** Shows what waits for approval and asks; No kills the task, Ctrl-C leaves it waiting. */
async function askAtGate(api: RemoteApi, id: string, status: 'awaiting_plan' | 'awaiting_diff', o: Output) {
  const stage = gateStage(status);
  const { task, logs } = await api.getTask(id);
  if (stage === 'plan') {
    prompts.note(planText(planOf(logs)), 'The plan', { output: process.stdout });
  } else if (task.diff_summary) {
    o.out(coloredDiff(task.diff_summary.trimEnd(), o.color));
  }
  const answer = await prompts.confirm({
    message: `Approve the ${stage}? (No kills the task)`,
    output: process.stdout,
  });
  if (prompts.isCancel(answer)) {
    o.err(`left waiting at the ${stage} gate: \`emend task approve ${id} ${stage}\` approves it`);
    process.exit(EXIT.interrupted);
  }
  try {
    if (answer) await api.approve(id, stage);
    else await api.kill(id);
  } catch (err) {
    // The gate may have timed out meanwhile; the stream says how the task ended.
    o.err(`emend: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The plan waiting at the gate: the planner's last finished output. */
const planOf = (logs: readonly TaskLog[]) =>
  logs.filter((l) => l.step === 'planner' && l.status === 'done').at(-1)?.output;

function planText(plan: Record<string, unknown> | undefined): string {
  if (!plan) return '(the planner left no plan)';
  const lines: string[] = [];
  if (typeof plan.summary === 'string') lines.push(plan.summary);
  if (Array.isArray(plan.steps)) for (const [i, s] of plan.steps.entries()) lines.push(`${i + 1}. ${String(s)}`);
  if (Array.isArray(plan.likely_files) && plan.likely_files.length > 0)
    lines.push(`files: ${plan.likely_files.join(', ')}`);
  return lines.join('\n');
}

/**
 * On a terminal the spinner puts stdin in raw mode and its Ctrl-C handler exits with 0, which
 * would read as "done". While following, an exit that is not ours becomes 130 with a hint.
 */
function guardInterrupt(o: Output, id: string) {
  const onExit = (code: number) => {
    if (code !== EXIT.ok) return;
    process.exitCode = EXIT.interrupted;
    o.err(`\nstopped following; the task goes on: \`emend task logs ${id} --follow\``);
  };
  process.on('exit', onExit);
  return { release: () => process.off('exit', onExit) };
}
