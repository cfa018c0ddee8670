import { useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { paths } from '../../api/schema';
import { LOCAL_URL_WARNING, isLocalUrl } from '../../api/local-url';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';
import { onLinkClick } from '../../router';

export type Triggers = paths['/v1/me/repos/triggers']['get']['responses'][200]['content']['application/json'];
type TriggerEvent = Triggers['events'][number];

/** What each event starts, as the API describes it. */
const EVENTS: Record<TriggerEvent, string> = {
  comments: 'Comments: a comment mentioning emend, on an issue or on its pull request',
  labels: 'Labels: the label added to an issue',
  reviews: 'Reviews: a line comment or a review requesting changes, mentioning emend, on its pull request',
};
const EVENT_NAMES = Object.keys(EVENTS) as TriggerEvent[];
/** Automatic CI follow-ups per pull request: the choices (the API allows 0 to 2). */
const CI_ROUNDS = [0, 1, 2] as const;
const DEFAULTS = { mention: '@emend', label: 'emend', events: EVENT_NAMES, ciRounds: 2 };

const sameEvents = (a: readonly TriggerEvent[], b: readonly TriggerEvent[]) =>
  a.length === b.length && a.every((e) => b.includes(e));

/**
 * A repository's code-host triggers (part of the repository settings): off, a form to turn them on
 * (a webhook is registered with the account's connection); on, their options, the hook URL, the
 * latest deliveries and turning them off. `say` writes the section's status line.
 */
export function RepoTriggers({
  repo,
  initial,
  say,
}: {
  repo: string;
  initial: Triggers | null;
  say: (note: string) => void;
}) {
  const [triggers, setTriggers] = useState<Triggers | null>(initial);
  const [mention, setMention] = useState(initial?.mention ?? DEFAULTS.mention);
  const [label, setLabel] = useState(initial?.label ?? DEFAULTS.label);
  const [events, setEvents] = useState<TriggerEvent[]>(initial?.events ?? DEFAULTS.events);
  const [ciRounds, setCiRounds] = useState<number>(initial?.ci_rounds ?? DEFAULTS.ciRounds);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const query = { params: { query: { repo } } };

  const show = (t: Triggers | null) => {
    setTriggers(t);
    setMention(t?.mention ?? DEFAULTS.mention);
    setLabel(t?.label ?? DEFAULTS.label);
    setEvents(t?.events ?? DEFAULTS.events);
    setCiRounds(t?.ci_rounds ?? DEFAULTS.ciRounds);
  };
  const run = async (what: () => Promise<string>) => {
    setError(null);
    say('');
    setBusy(true);
    try {
      say(await what());
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const toggle = (name: TriggerEvent) =>
    setEvents((now) => (now.includes(name) ? now.filter((x) => x !== name) : [...now, name]));

  const changed = triggers && {
    ...(mention !== triggers.mention ? { mention } : {}),
    ...(label !== triggers.label ? { label } : {}),
    ...(!sameEvents(events, triggers.events) ? { events: EVENT_NAMES.filter((e) => events.includes(e)) } : {}),
    ...(ciRounds !== triggers.ci_rounds ? { ci_rounds: ciRounds } : {}),
  };
  const submit = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      if (triggers) {
        show(await call(client.PUT('/v1/me/repos/triggers', { ...query, body: changed ?? {} })));
        return 'Triggers saved.';
      }
      const body = { mention, label, events: EVENT_NAMES.filter((x) => events.includes(x)), ci_rounds: ciRounds };
      const on = await call(client.PUT('/v1/me/repos/triggers', { ...query, body }));
      show(on);
      return `Triggers are on: ${on.host} delivers this repository's events to emend.`;
    });
  };
  const turnOff = () =>
    run(async () => {
      await call(client.DELETE('/v1/me/repos/triggers', query));
      show(null);
      return 'Triggers are off: the webhook was removed from the code host.';
    });

  return (
    <section aria-label="Triggers">
      <h3>Triggers</h3>
      <p>
        Start a task from the code host: a comment mentioning emend, the label on an issue, or a review on emend's pull
        request. Turning them on adds a webhook to the repository with your code-host connection, which must be allowed
        to manage its webhooks: on GitHub a classic token with <code>repo</code> (or a fine-grained one with Webhooks
        and Issues read and write) from an admin of the repository; on GitLab <code>api</code> from a Maintainer; on
        Gitea/Forgejo <code>write:repository</code> from a repository admin.
      </p>
      <p data-testid="triggers-state">
        {triggers ? (
          <>
            Triggers are <strong>on</strong> ({triggers.host}, since {when(triggers.created_at)}).
          </>
        ) : (
          <>
            Triggers are <strong>off</strong>.
          </>
        )}
      </p>
      {triggers && (
        <p>
          Hook URL: <code data-testid="hook-url">{triggers.hook_url}</code>
          <br />
          <span class="hint">The code host must be able to reach this address to deliver events.</span>
        </p>
      )}
      {triggers && isLocalUrl(triggers.hook_url) && (
        <p class="warning" data-testid="hook-url-local">
          {LOCAL_URL_WARNING} A code host elsewhere cannot deliver events to it.
        </p>
      )}
      <form class="form" onSubmit={submit} aria-label="Trigger options">
        <label for="trigger-mention">Mention</label>
        <input
          id="trigger-mention"
          required
          value={mention}
          onInput={(e) => setMention(e.currentTarget.value)}
          aria-describedby="trigger-mention-hint"
        />
        <p class="hint" id="trigger-mention-hint">
          A comment naming this starts a task.
        </p>
        <label for="trigger-label">Label</label>
        <input
          id="trigger-label"
          required
          value={label}
          onInput={(e) => setLabel(e.currentTarget.value)}
          aria-describedby="trigger-label-hint"
        />
        <p class="hint" id="trigger-label-hint">
          This label, added to an issue, starts a task.
        </p>
        <fieldset>
          <legend>Events</legend>
          {EVENT_NAMES.map((name) => (
            <label key={name} class="inline">
              <input
                type="checkbox"
                name="trigger-events"
                value={name}
                checked={events.includes(name)}
                onChange={() => toggle(name)}
              />{' '}
              {EVENTS[name]}
            </label>
          ))}
        </fieldset>
        <label for="trigger-ci-rounds">CI follow-ups</label>
        <select
          id="trigger-ci-rounds"
          value={String(ciRounds)}
          onChange={(e) => setCiRounds(Number(e.currentTarget.value))}
          aria-describedby="trigger-ci-rounds-hint"
        >
          {CI_ROUNDS.map((n) => (
            <option key={n} value={String(n)}>
              {n === 0 ? 'Off' : `${n} per pull request`}
            </option>
          ))}
        </select>
        <p class="hint" id="trigger-ci-rounds-hint">
          When the checks of a pull request emend opened fail, emend reads the failing jobs' logs and pushes a fix, at
          most this many times; a job failing again after a fix ends them. Mentioning emend with "fix the CI" asks for
          one more.
        </p>
        <div class="actions">
          {triggers ? (
            <>
              <button type="submit" disabled={busy || !changed || Object.keys(changed).length === 0}>
                Save triggers
              </button>
              <button type="button" class="danger" disabled={busy} onClick={turnOff}>
                Turn triggers off
              </button>
            </>
          ) : (
            <button type="submit" disabled={busy}>
              Turn triggers on
            </button>
          )}
        </div>
      </form>
      <ErrorNote error={error} />
      {triggers && <Deliveries deliveries={triggers.recent_deliveries} />}
    </section>
  );
}

function Deliveries({ deliveries }: { deliveries: Triggers['recent_deliveries'] }) {
  if (deliveries.length === 0) return <p>No deliveries yet.</p>;
  return (
    <table class="deliveries">
      <caption>Recent deliveries, newest first</caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Reason</th>
          <th scope="col">Task</th>
          <th scope="col">Received</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.delivery_id} data-delivery={d.delivery_id}>
            <td>{d.event}</td>
            <td>{d.status}</td>
            <td>{d.reason ?? '—'}</td>
            <td>
              {d.task_id ? (
                <a href={`/app/tasks/${d.task_id}`} onClick={onLinkClick}>
                  The task
                </a>
              ) : (
                '—'
              )}
            </td>
            <td>{when(d.received_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
