import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { WebhookDelivery, WebhookEndpoint } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';

const EVENTS = [
  'task.done',
  'task.failed',
  'task.cancelled',
  'task.awaiting_approval',
  'pr.merged',
  'spend.threshold',
] as const;
type EventName = (typeof EVENTS)[number];

/** Webhook endpoints: added (the signing secret shown once), listed, paused, tested, removed; recent deliveries. */
export function Webhooks() {
  const [endpoints, setEndpoints] = useState<WebhookEndpoint[]>([]);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<EventName[]>(['task.done', 'task.failed']);
  const [fresh, setFresh] = useState<string | null>(null);
  const [open, setOpen] = useState<{ id: string; deliveries: WebhookDelivery[] } | null>(null);
  const [error, setError] = useState<unknown>(null);

  const load = () => call(client.GET('/v1/me/webhooks')).then(setEndpoints, setError);
  useEffect(() => {
    void load();
  }, []);
  const act = (fn: () => Promise<unknown>) => async () => {
    setError(null);
    try {
      await fn();
      await load();
    } catch (err) {
      setError(err);
    }
  };
  const showDeliveries = async (id: string) => {
    const deliveries = await call(client.GET('/v1/me/webhooks/{id}/deliveries', { params: { path: { id } } }));
    setOpen({ id, deliveries });
  };

  const create = async (e: Event) => {
    e.preventDefault();
    await act(async () => {
      const made = await call(client.POST('/v1/me/webhooks', { body: { url: url.trim(), events } }));
      setFresh(made.secret);
      setUrl('');
    })();
  };
  const toggle = (name: EventName) =>
    setEvents((now) => (now.includes(name) ? now.filter((x) => x !== name) : [...now, name]));

  return (
    <div class="card">
      <h2>Webhooks</h2>
      {fresh && (
        <div class="secret" role="status">
          <p>The endpoint’s signing secret. Copy it now: it is shown this once.</p>
          <input aria-label="The signing secret" readOnly value={fresh} data-testid="webhook-secret" />
          <button type="button" onClick={() => setFresh(null)}>
            I have copied it
          </button>
        </div>
      )}
      <form class="form" onSubmit={create} aria-label="Add a webhook endpoint">
        <label for="webhook-url">Endpoint URL</label>
        <input id="webhook-url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
        <fieldset>
          <legend>Events</legend>
          {EVENTS.map((name) => (
            <label key={name}>
              <input type="checkbox" checked={events.includes(name)} onChange={() => toggle(name)} /> {name}
            </label>
          ))}
        </fieldset>
        <button type="submit">Add endpoint</button>
      </form>
      {endpoints.length === 0 ? (
        <p data-testid="no-webhooks">
          No endpoints yet. Add a URL above and emend POSTs the events you chose to it, signed with a secret shown once
          (docs/webhooks.md): a chat bot or CI job can then act when a task ends or waits for approval.
        </p>
      ) : (
        <table class="webhooks">
          <caption class="sr-only">Your webhook endpoints</caption>
          <thead>
            <tr>
              <th scope="col">URL</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.map((w) => (
              <tr key={w.id} data-webhook={w.id}>
                <td>
                  <code>{w.url}</code>
                </td>
                <td>{w.events.join(', ')}</td>
                <td>{w.enabled ? 'on' : `off${w.disabled_reason ? `: ${w.disabled_reason}` : ''}`}</td>
                <td class="actions">
                  <button
                    type="button"
                    class="link"
                    onClick={act(() =>
                      call(client.POST('/v1/me/webhooks/{id}/test', { params: { path: { id: w.id } } })),
                    )}
                  >
                    Send a test
                  </button>
                  <button
                    type="button"
                    class="link"
                    onClick={act(() =>
                      call(
                        client.PATCH('/v1/me/webhooks/{id}', {
                          params: { path: { id: w.id } },
                          body: { enabled: !w.enabled },
                        }),
                      ),
                    )}
                  >
                    {w.enabled ? 'Pause' : 'Enable'}
                  </button>
                  <button type="button" class="link" onClick={() => void showDeliveries(w.id).catch(setError)}>
                    Deliveries
                  </button>
                  <button
                    type="button"
                    class="link"
                    onClick={act(async () => {
                      if (confirm(`Remove the endpoint ${w.url} and its delivery history?`))
                        await call(client.DELETE('/v1/me/webhooks/{id}', { params: { path: { id: w.id } } }));
                    })}
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {open && <Deliveries deliveries={open.deliveries} />}
      <ErrorNote error={error} />
    </div>
  );
}

function Deliveries({ deliveries }: { deliveries: WebhookDelivery[] }) {
  if (deliveries.length === 0) return <p>No deliveries yet.</p>;
  return (
    <table class="deliveries">
      <caption>Recent deliveries</caption>
      <thead>
        <tr>
          <th scope="col">Event</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Last answer</th>
          <th scope="col">When</th>
        </tr>
      </thead>
      <tbody>
        {deliveries.map((d) => (
          <tr key={d.id} data-delivery={d.id}>
            <td>{d.event}</td>
            <td>{d.status}</td>
            <td>{d.attempts}</td>
            <td>
              {d.last_response_code ?? d.last_error ?? '—'}
              {d.duration_ms !== null ? ` in ${d.duration_ms} ms` : ''}
            </td>
            <td>{when(d.created_at)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
