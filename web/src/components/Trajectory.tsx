import { useState } from 'preact/hooks';
import type { LogRecord } from '../api/types';
import { money } from './Status';

/**
 * One turn of the agent fixer, as each of its `running` log records carries it in
 * `output.agent_turn` (docs/agent.md, "Reading a trajectory").
 */
export interface AgentTurn {
  /** The log row's id: the key of the turn's row. */
  id: number;
  turn: number;
  tool: string;
  /** The command, or the editor's command and path. */
  action: string;
  exit_code?: number | null;
  ok?: boolean;
  /** What the model saw, its head and tail: text from the repository, shown as text only. */
  observation: string;
  /** The step's tokens and cost so far. */
  tokens: number;
  cost_usd: number;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const text = (v: unknown) => (typeof v === 'string' ? v : '');

/**
 * The agent turn a log record holds, or null. Read field by field: the record is the server's JSON
 * and the document gives the log's output no shape.
 */
export function turnOf(log: LogRecord): AgentTurn | null {
  if (log.step !== 'fixer') return null;
  const t = log.output?.agent_turn;
  if (!t || typeof t !== 'object') return null;
  const r = t as Record<string, unknown>;
  return {
    id: log.id,
    turn: num(r.turn),
    tool: text(r.tool),
    action: text(r.action),
    ...(typeof r.exit_code === 'number' || r.exit_code === null ? { exit_code: r.exit_code } : {}),
    ...(typeof r.ok === 'boolean' ? { ok: r.ok } : {}),
    observation: text(r.observation),
    tokens: num(r.tokens),
    cost_usd: num(r.cost_usd),
  };
}

/**
 * The fixer's runs, each its turns in order. A run starts after the step's own first record (a
 * `running` record without a turn), so a retry after a failed verdict, or a worker resumed, shows
 * as a run of its own (its turns are numbered from 1 again). A pipeline fixer has none.
 */
export function agentRuns(logs: readonly LogRecord[]): AgentTurn[][] {
  const runs: AgentTurn[][] = [];
  let current: AgentTurn[] | null = null;
  for (const log of logs) {
    if (log.step !== 'fixer') continue;
    const turn = turnOf(log);
    if (!turn) {
      current = null;
      continue;
    }
    if (!current) {
      current = [];
      runs.push(current);
    }
    current.push(turn);
  }
  return runs;
}

/** How the turn ended: the command's exit code, or whether the editor's (or submit's) action succeeded. */
function result(t: AgentTurn): { label: string; good: boolean | null } {
  if (t.exit_code === null) return { label: 'no exit code (stopped)', good: false };
  if (typeof t.exit_code === 'number') return { label: `exit ${t.exit_code}`, good: t.exit_code === 0 };
  if (t.ok !== undefined) return { label: t.ok ? 'ok' : 'failed', good: t.ok };
  return { label: '—', good: null };
}

/** The observation's first line, short enough for the row; the whole of it opens below. */
function firstLine(observation: string) {
  const line = observation.trimStart().split('\n', 1)[0] ?? '';
  const lines = observation.split('\n').length;
  const head = line.length > 80 ? `${line.slice(0, 80)}…` : line;
  return lines > 1 ? `${head} (${lines} lines)` : head;
}

function Observation({ observation }: { observation: string }) {
  if (!observation) return <span class="hint">none</span>;
  // Text children only: the observation is the repository's (and the model's) words, never markup.
  return (
    <details>
      <summary>{firstLine(observation)}</summary>
      <pre class="raw">{observation}</pre>
    </details>
  );
}

/** A run longer than this shows its first and last turns, the middle behind a button. */
const COLLAPSE_OVER = 12;
/** How many turns a collapsed run shows at each end. */
const ENDS = 5;

/**
 * The turns a run shows: all of them, or (a long run not yet opened) its first and last ENDS with
 * the count hidden between them. The tail is the newest turns, so a live run keeps growing there.
 */
function visibleTurns<T>(run: readonly T[], open: boolean): { head: T[]; hidden: number; tail: T[] } {
  if (open || run.length <= COLLAPSE_OVER) return { head: [...run], hidden: 0, tail: [] };
  return { head: run.slice(0, ENDS), hidden: run.length - 2 * ENDS, tail: run.slice(-ENDS) };
}

function TurnRow({ t }: { t: AgentTurn }) {
  const r = result(t);
  return (
    <tr data-turn={t.turn} data-tool={t.tool}>
      <td class="num">{t.turn}</td>
      <td>{t.tool === 'none' ? 'none (no tool called)' : t.tool}</td>
      <td class="action">{t.action ? <code>{t.action}</code> : <span class="hint">—</span>}</td>
      <td class={r.good === null ? '' : r.good ? 'ok' : 'task-error'} data-result={r.label}>
        {r.label}
      </td>
      <td class="observation">
        <Observation observation={t.observation} />
      </td>
      <td class="num">{t.tokens}</td>
      <td class="num">{money(t.cost_usd)}</td>
    </tr>
  );
}

/** One run's table; a long run opens its middle turns with a button, and stays open. */
function RunTable({ run, index, runs }: { run: AgentTurn[]; index: number; runs: number }) {
  const [open, setOpen] = useState(false);
  const { head, hidden, tail } = visibleTurns(run, open);
  return (
    <div class="table-scroll">
      <table class="turns" data-run={index + 1}>
        <caption>
          {runs > 1 ? `Run ${index + 1} of the fixer: ` : ''}
          {run.length === 1 ? '1 turn' : `${run.length} turns`}
        </caption>
        <thead>
          <tr>
            <th scope="col">Turn</th>
            <th scope="col">Tool</th>
            <th scope="col">Command or edit</th>
            <th scope="col">Result</th>
            <th scope="col">Observation</th>
            <th scope="col" class="num">
              Tokens
            </th>
            <th scope="col" class="num">
              Cost
            </th>
          </tr>
        </thead>
        <tbody>
          {head.map((t) => (
            <TurnRow key={t.id} t={t} />
          ))}
          {hidden > 0 && (
            <tr class="more-turns" data-hidden={hidden}>
              <td colSpan={7}>
                <button type="button" class="link" onClick={() => setOpen(true)}>
                  {hidden === 1 ? 'Show 1 more turn' : `Show ${hidden} more turns`}
                </button>
              </td>
            </tr>
          )}
          {tail.map((t) => (
            <TurnRow key={t.id} t={t} />
          ))}
        </tbody>
      </table>
    </div>
  );
}

/**
 * The agent fixer's trajectory: a table of its turns per run (turn, tool, command or edit, how it
 * ended, what it showed, the step's tokens and cost so far). It grows as the stream brings turns;
 * nothing is shown for a fixer that took no turns (the pipeline fixer). A run of more than
 * COLLAPSE_OVER turns shows its first and last ENDS until "Show N more turns" is pressed.
 */
export function Trajectory({ logs }: { logs: readonly LogRecord[] }) {
  const runs = agentRuns(logs);
  if (runs.length === 0) return null;
  return (
    <section class="trajectory" aria-labelledby="trajectory-heading">
      <h4 id="trajectory-heading">Agent trajectory</h4>
      {runs.map((run, i) => (
        <RunTable key={run[0]!.id} run={run} index={i} runs={runs.length} />
      ))}
    </section>
  );
}
