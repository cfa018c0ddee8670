import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client } from '../api/client';
import { HOST_KINDS } from '../api/host-kinds';
import {
  type LogRecord,
  type StepName,
  type Task,
  type TaskLogEvent,
  type TaskStateEvent,
  type TaskStatus,
  isTerminal,
} from '../api/types';
import { Diff } from '../components/Diff';
import { ErrorNote } from '../components/ErrorNote';
import { FeedbackForm } from '../components/Feedback';
import { StatusBadge, money, when } from '../components/Status';
import { FixerAttempts, attemptEnded } from '../components/Attempts';
import { StepOutput, passOf } from '../components/StepOutput';
import { Trajectory, turnOf } from '../components/Trajectory';
import { navigate } from '../router';

/** The contract's steps in run order, each with its heading (every step name of the document has one). */
const STEP_NAMES: Record<StepName, string> = {
  planner: 'Plan',
  locator: 'Located files',
  inspector: 'Insights',
  fixer: 'Fix',
  validator: 'Validation',
  pr: 'Pull request',
};
const STEPS = Object.keys(STEP_NAMES).filter((s): s is StepName => Object.hasOwn(STEP_NAMES, s));
const headingOf = (step: string) =>
  Object.hasOwn(STEP_NAMES, step) ? STEP_NAMES[step as StepName] : step.charAt(0).toUpperCase() + step.slice(1);

/**
 * The steps to show: the contract's, and any other the log names (a step added after this panel
 * was built), placed after the step the log had before it.
 */
function stepsShown(logs: readonly LogRecord[], scaffold: boolean): string[] {
  // A scaffold task runs steps of its own: only those its log names, none of a fix's.
  const shown: string[] = scaffold ? [] : [...STEPS];
  let after = -1;
  for (const { step } of logs) {
    const at = shown.indexOf(step);
    if (at < 0) shown.splice(after + 1, 0, step);
    after = at < 0 ? after + 1 : at;
  }
  return shown;
}

/** Where a task started on a code host came from, in words: "Asked on GitHub by @rita in a comment on issue #12". */
function Origin({ trigger }: { trigger: NonNullable<Task['trigger']> }) {
  // The host's product name when its id is one (the default hosts); otherwise the operator's id for it.
  const host = Object.hasOwn(HOST_KINDS, trigger.host)
    ? HOST_KINDS[trigger.host as keyof typeof HOST_KINDS].productName
    : trigger.host;
  const gitlab = trigger.host === 'gitlab';
  const thread =
    trigger.thread === 'issue'
      ? `issue #${trigger.number}`
      : gitlab
        ? `merge request !${trigger.number}`
        : `pull request #${trigger.number}`;
  const ci = trigger.ci;
  if (trigger.kind === 'ci' && ci && ci.round !== null)
    return (
      <p class="origin" data-testid="task-origin">
        A CI follow-up on {host}: the checks of {thread} failed on <code>{ci.sha.slice(0, 7)}</code> (
        <a href={trigger.comment_url} target="_blank" rel="noopener noreferrer">
          {ci.jobs.map((j) => j.name).join(', ')}
        </a>
        ), automatic round {ci.round}.
      </p>
    );
  const how = {
    comment: `in a comment on ${thread}`,
    label: `with the label on ${thread}`,
    line_comment: `in a line comment on ${thread}`,
    review: `in a review of ${thread}`,
    ci: `to fix the failing CI of ${thread}`,
  }[trigger.kind];
  return (
    <p class="origin" data-testid="task-origin">
      Asked on {host} by @{trigger.actor}{' '}
      <a href={trigger.comment_url} target="_blank" rel="noopener noreferrer">
        {how}
      </a>
      .
    </p>
  );
}

/**
 * A task that failed before it did anything: no change made and no step past the planner in its
 * log (no model configured, a repository it could not reach, a plan that failed). Such a task has
 * no result to rate, so it takes no feedback (docs/decisions.md, "No feedback on a task that did nothing").
 */
export function failedBeforeWork(task: Task, logs: readonly LogRecord[]): boolean {
  return task.status === 'failed' && !task.diff_summary && logs.every((l) => l.step === 'planner');
}

const ACTIVE: readonly TaskStatus[] = ['pending', 'running', 'awaiting_plan', 'awaiting_diff'];
const path = (id: string) => ({ params: { path: { id } } });

/** One task: its live log over Server-Sent Events, what each step produced, and what can be done with it. */
/** A task, followed live; `acts`: the role may approve, stop, continue it and give feedback (a viewer only reads). */
export function TaskPage({ id, acts }: { id: string; acts: boolean }) {
  const [task, setTask] = useState<Task | null>(null);
  const [logs, setLogs] = useState<LogRecord[]>([]);
  const [live, setLive] = useState<'connecting' | 'live' | 'ended' | 'lost'>('connecting');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const seen = useRef(new Set<number>());

  const refresh = async () => {
    const got = await call(client.GET('/v1/tasks/{id}', path(id)));
    setTask(got.task);
    return got;
  };
  // A `state` event carries every field of the task a run changes: no need to read the task again.
  const applyState = (state: TaskStateEvent) => setTask((t) => (t ? { ...t, ...state } : t));

  useEffect(() => {
    let source: EventSource | undefined;
    let stopped = false;
    seen.current = new Set();
    setLogs([]);
    setLive('connecting');
    // The task's read brings its logs so far, shown at once (a finished task's whole trajectory
    // among them, even if the stream fails); the stream replays every log of the task, the ones
    // already shown skipped by their id, then follows it (the session cookie goes with it).
    refresh()
      .then((got) => {
        if (stopped) return;
        const known = got.logs.filter((l) => !seen.current.has(l.id));
        for (const l of known) seen.current.add(l.id);
        setLogs(
          known.map(({ id: logId, step, status, output, created_at }) => ({
            id: logId,
            step,
            status,
            output,
            created_at,
          })),
        );
        source = new EventSource(`/v1/tasks/${id}/logs/stream`);
        source.addEventListener('connected', () => setLive('live'));
        source.addEventListener('log', (e) => {
          const ev = e as MessageEvent<string>;
          const logId = Number(ev.lastEventId);
          if (seen.current.has(logId)) return;
          seen.current.add(logId);
          const data: TaskLogEvent = JSON.parse(ev.data);
          setLogs((prev) => [...prev, { ...data, id: logId }]);
        });
        source.addEventListener('state', (e) => {
          const state: TaskStateEvent = JSON.parse((e as MessageEvent<string>).data);
          applyState(state);
        });
        // The state event sent just before `end` already described the finished task.
        source.addEventListener('end', () => {
          source?.close();
          setLive('ended');
        });
        source.onerror = () => {
          if (source?.readyState === EventSource.CLOSED) setLive((s) => (s === 'ended' ? s : 'lost'));
        };
      })
      .catch(setError);
    return () => {
      stopped = true;
      source?.close();
    };
  }, [id]);

  const act = async (label: string, fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      // A followed task hears of the change from the stream's next `state` event; reading the
      // task here too could land after that event and put an older snapshot back on the page.
      if (live !== 'live') await refresh();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
    return label;
  };

  if (!task) {
    return (
      <section>
        <h1 tabIndex={-1}>Task</h1>
        <ErrorNote error={error} />
        {!error && <p>Loading…</p>}
      </section>
    );
  }

  const latest = (step: string) => [...logs].reverse().find((l) => l.step === step);
  const finished = (step: string) => [...logs].reverse().find((l) => l.step === step && l.status !== 'running');

  return (
    <section class="task">
      <h1 tabIndex={-1}>{task.task_type === 'scaffold' ? 'Site task' : 'Fix task'}</h1>
      <p class="prompt">{task.prompt}</p>
      {task.trigger && <Origin trigger={task.trigger} />}
      <dl class="facts">
        <dt>Status</dt>
        <dd>
          <StatusBadge status={task.status} />{' '}
          <span class="sr-only" aria-live="polite">{`Status: ${task.status}`}</span>
        </dd>
        {task.repo_url && (
          <>
            <dt>Repository</dt>
            <dd>
              {task.repo_url} ({task.base_branch})
            </dd>
          </>
        )}
        <dt>{task.task_type === 'scaffold' ? 'Approval' : 'Mode'}</dt>
        <dd>
          {task.task_type === 'scaffold'
            ? task.approval_mode
            : `${task.mode === 'preview' ? 'preview (no pull request)' : 'pull request'}, approval ${task.approval_mode}`}
        </dd>
        <dt>Cost</dt>
        <dd>
          {money(task.cost_usd)} · {task.tokens_total} tokens
        </dd>
        <dt>Created</dt>
        <dd>{when(task.created_at)}</dd>
        {task.pr_url && (
          <>
            <dt>Pull request</dt>
            <dd>
              <a href={task.pr_url} target="_blank" rel="noopener noreferrer">
                {task.pr_url}
              </a>
            </dd>
          </>
        )}
        {task.deployed_url && (
          <>
            <dt>Live site</dt>
            <dd>
              <a href={task.deployed_url} target="_blank" rel="noopener noreferrer">
                {task.deployed_url}
              </a>
            </dd>
          </>
        )}
        {task.error && (
          <>
            <dt>Error</dt>
            <dd class="task-error">{task.error}</dd>
          </>
        )}
      </dl>

      <ErrorNote error={error} />

      {acts && (
        <div class="actions">
          {task.status === 'awaiting_plan' && (
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                act('approve plan', () =>
                  call(client.POST('/v1/tasks/{id}/approve', { ...path(id), body: { stage: 'plan' } })),
                )
              }
            >
              Approve the plan
            </button>
          )}
          {task.status === 'awaiting_diff' && (
            <button
              type="button"
              disabled={busy}
              onClick={() =>
                act('approve diff', () =>
                  call(client.POST('/v1/tasks/{id}/approve', { ...path(id), body: { stage: 'diff' } })),
                )
              }
            >
              Approve the diff
            </button>
          )}
          {ACTIVE.includes(task.status) && (
            <button
              type="button"
              class="danger"
              disabled={busy}
              onClick={() => {
                if (confirm('Stop this task now? Its sandbox is killed and no credit is used.'))
                  void act('kill', () => call(client.POST('/v1/tasks/{id}/kill', path(id))));
              }}
            >
              Stop the task
            </button>
          )}
          {task.mode === 'preview' && task.status === 'done' && (
            <button
              type="button"
              disabled={busy}
              onClick={async () => {
                setBusy(true);
                try {
                  const child = await call(client.POST('/v1/tasks/{id}/continue', path(id)));
                  navigate(`/app/tasks/${child.id}`);
                } catch (err) {
                  setError(err);
                } finally {
                  setBusy(false);
                }
              }}
            >
              Continue to a pull request
            </button>
          )}
        </div>
      )}

      <h2>Live log</h2>
      <p class="hint" data-stream={live}>
        {live === 'connecting'
          ? 'Connecting to the log stream…'
          : live === 'live'
            ? 'Following the task live.'
            : live === 'ended'
              ? 'The task has finished.'
              : 'The log stream was lost; reload the page to follow the task again.'}
      </p>
      <ol class="log" aria-live="polite" aria-label="Log records">
        {logs.map((l) => {
          const turn = turnOf(l);
          const ended = attemptEnded(l);
          const pass = l.step === 'validator' && l.status !== 'running' && l.output ? passOf(l.output) : null;
          return (
            <li key={l.id} data-step={l.step} data-status={l.status}>
              <time dateTime={l.created_at}>{new Date(l.created_at).toLocaleTimeString()}</time>{' '}
              <strong>{l.step}</strong> <StatusBadge status={l.status} />
              {turn && ` turn ${turn.turn}: ${turn.tool}`}
              {ended && ` attempt ${ended.attempt} ended`}
              {pass && ` ${pass}`}
            </li>
          );
        })}
      </ol>

      <h2>Steps</h2>
      <ol class="steps">
        {stepsShown(logs, task.task_type === 'scaffold').map((step) => {
          const state = latest(step);
          const done = finished(step);
          return (
            <li key={step} class="step" data-step={step}>
              <h3>
                {headingOf(step)}{' '}
                {state ? <StatusBadge status={state.status} /> : <span class="badge">not started</span>}
              </h3>
              {step === 'fixer' && <Trajectory logs={logs} />}
              {step === 'fixer' && <FixerAttempts logs={logs} />}
              {done && <StepOutput step={step} log={done} taskType={task.task_type} />}
            </li>
          );
        })}
      </ol>

      {task.diff_summary && !finished('fixer')?.output?.diff && (
        <>
          <h2>Diff</h2>
          <Diff text={task.diff_summary} label="The change" />
        </>
      )}

      {task.task_type === 'scaffold' && task.deployed_url && (
        <>
          <h2>Screenshots</h2>
          <div class="shots">
            <figure>
              <img src={`/v1/tasks/${id}/screenshots/desktop.png`} alt="The site on a desktop screen" loading="lazy" />
              <figcaption>Desktop</figcaption>
            </figure>
            <figure>
              <img src={`/v1/tasks/${id}/screenshots/mobile.png`} alt="The site on a phone" loading="lazy" />
              <figcaption>Phone</figcaption>
            </figure>
          </div>
        </>
      )}

      {acts &&
        isTerminal(task.status) &&
        (failedBeforeWork(task, logs) ? (
          <p class="hint" data-testid="no-feedback">
            The task failed before it changed anything, so there is nothing to give feedback on.
          </p>
        ) : (
          <FeedbackForm taskId={id} />
        ))}
    </section>
  );
}
