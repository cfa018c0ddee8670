import type { FixOutputs, LogRecord } from '../api/types';
import { Diff } from './Diff';
import { money } from './Status';

type Attempt = NonNullable<FixOutputs['fixer']['attempts']>[number];
type Choice = NonNullable<FixOutputs['fixer']['choice']>;

const verdictOf = (a: Partial<Attempt>) =>
  a.status === 'failed'
    ? 'error'
    : a.passed === true
      ? 'passed'
      : a.passed === false
        ? `failed (${a.new_failure_count ?? 0} new failure${a.new_failure_count === 1 ? '' : 's'})`
        : 'no verdict';

/**
 * A fix task's attempts (docs/agent.md, "Attempts"): a row each (its fixer and temperature, the
 * validator's verdict, its size and cost), which was chosen and why, and every attempt's whole
 * diff to open. Read from the fixer's finished record; text from the repository shown as text.
 */
export function Attempts({ attempts, choice }: { attempts: Partial<Attempt>[]; choice?: Partial<Choice> }) {
  return (
    <div class="attempts">
      <table>
        <caption>Attempts</caption>
        <thead>
          <tr>
            <th scope="col">Attempt</th>
            <th scope="col">Fixer</th>
            <th scope="col">Verdict</th>
            <th scope="col">Change</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {attempts.map((a) => (
            <tr key={a.attempt} data-chosen={a.chosen ? 'yes' : 'no'}>
              <th scope="row">
                {String(a.attempt)}
                {a.chosen ? ' (chosen)' : ''}
              </th>
              <td>
                {String(a.fixer)} at temperature {String(a.temperature)}
              </td>
              <td>
                {verdictOf(a)}
                {a.status === 'failed' && a.error ? `: ${a.error.split('\n')[0]}` : ''}
              </td>
              <td>
                +{String(a.lines_added ?? 0)} −{String(a.lines_removed ?? 0)} in {(a.files_changed ?? []).length} file
                {(a.files_changed ?? []).length === 1 ? '' : 's'}
              </td>
              <td>
                {money(a.cost_usd ?? 0)}, {String(a.tokens ?? 0)} tokens
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {choice?.reason && <p class="choice">Chosen: {choice.reason}</p>}
      {attempts
        .filter((a) => typeof a.diff === 'string' && a.diff)
        .map((a) => (
          <details key={`diff-${a.attempt}`}>
            <summary>
              Attempt {String(a.attempt)}’s diff{a.chosen ? ' (the task’s change)' : ''}
            </summary>
            <Diff text={a.diff ?? ''} label={`The change of attempt ${String(a.attempt)}`} />
          </details>
        ))}
    </div>
  );
}

/** The attempt a fixer's running record says has ended (its `attempt_done`), or null. */
export function attemptEnded(log: LogRecord): Partial<Attempt> | null {
  const done = log.step === 'fixer' && log.status === 'running' ? log.output?.attempt_done : undefined;
  return done && typeof done === 'object' ? (done as Partial<Attempt>) : null;
}

/**
 * The fixer's attempts on the task page: from its last finished record that has them (a retry's
 * record has none, and the attempts stay shown above it), else, while they run, those that have
 * ended so far.
 */
export function FixerAttempts({ logs }: { logs: readonly LogRecord[] }) {
  const record = logs
    .filter((l) => l.step === 'fixer' && l.status !== 'running' && Array.isArray(l.output?.attempts))
    .at(-1);
  if (record) {
    const o = record.output as Partial<FixOutputs['fixer']>;
    return <Attempts attempts={o.attempts ?? []} choice={o.choice} />;
  }
  const ended = logs.flatMap((l) => attemptEnded(l) ?? []);
  return ended.length > 0 ? <Attempts attempts={ended} /> : null;
}
