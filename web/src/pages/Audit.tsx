import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../api/client';
import type { paths } from '../api/schema';
import type { Profile } from '../api/types';
import { ErrorNote } from '../components/ErrorNote';
import { when } from '../components/Status';

type AuditQuery = NonNullable<paths['/v1/workspaces/{id}/audit']['get']['parameters']['query']>;
type AuditRow = Awaited<ReturnType<typeof loadPage>>[number];

const PAGE = 50;
const loadPage = (workspaceId: string, query: AuditQuery) =>
  call(client.GET('/v1/workspaces/{id}/audit', { params: { path: { id: workspaceId }, query } }));

/** A date-time-local input's value as the API's date-time (the browser's zone), or undefined when empty. */
const isoOf = (local: string) => (local ? new Date(local).toISOString() : undefined);

const targetsOf = (row: AuditRow) =>
  Object.entries(row.targets)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');

/**
 * The workspace's audit log (owner and maintainers): newest first, filtered by action, actor,
 * target, decision and time, older rows a page at a time, and the JSON-lines export.
 */
export function AuditPage({ profile }: { profile: Profile }) {
  const ws = profile.workspace.id;
  const [rows, setRows] = useState<AuditRow[]>([]);
  const [more, setMore] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [filters, setFilters] = useState({ action: '', actor: '', target: '', decision: '', since: '', until: '' });

  const queryOf = (): AuditQuery => ({
    limit: PAGE,
    action: filters.action.trim() || undefined,
    actor: filters.actor.trim() || undefined,
    target: filters.target.trim() || undefined,
    decision: (filters.decision || undefined) as AuditQuery['decision'],
    since: isoOf(filters.since),
    until: isoOf(filters.until),
  });

  const load = async (older: boolean) => {
    setError(null);
    try {
      const cursor = older && rows.length ? String(rows[rows.length - 1]!.seq) : undefined;
      const page = await loadPage(ws, { ...queryOf(), cursor });
      setRows(older ? [...rows, ...page] : page);
      setMore(page.length === PAGE);
    } catch (err) {
      setError(err);
    }
  };
  useEffect(() => {
    void load(false);
  }, []);

  const exportQuery = new URLSearchParams(
    Object.entries({ ...queryOf(), limit: undefined }).filter((e): e is [string, string] => typeof e[1] === 'string'),
  ).toString();
  const input = (name: keyof typeof filters, label: string, type = 'text') => (
    <label>
      {label}
      <input
        type={type}
        name={name}
        value={filters[name]}
        onInput={(e) => setFilters({ ...filters, [name]: (e.currentTarget as HTMLInputElement).value })}
      />
    </label>
  );

  return (
    <section>
      <h1 tabIndex={-1}>Audit log</h1>
      <p>
        Who did what in {profile.workspace.name}: every change, sign-in and refused act, with the address and browser it
        came from.
      </p>
      <form
        class="card"
        data-testid="audit-filters"
        onSubmit={(e) => {
          e.preventDefault();
          void load(false);
        }}
      >
        {input('action', 'Action (e.g. token.minted, or member.)')}
        {input('actor', 'Actor (account id)')}
        {input('target', 'Target id')}
        <label>
          Decision
          <select
            name="decision"
            value={filters.decision}
            onChange={(e) => setFilters({ ...filters, decision: (e.currentTarget as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            <option value="allowed">allowed</option>
            <option value="denied">denied</option>
          </select>
        </label>
        {input('since', 'Since', 'datetime-local')}
        {input('until', 'Until', 'datetime-local')}
        <button type="submit">Filter</button>{' '}
        <a href={`/v1/workspaces/${ws}/audit.jsonl${exportQuery ? `?${exportQuery}` : ''}`} download>
          Export (JSON Lines)
        </a>
      </form>
      <ErrorNote error={error} />
      <table class="tokens" data-testid="audit">
        <caption class="sr-only">The workspace’s audit log, newest first</caption>
        <thead>
          <tr>
            <th scope="col">#</th>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">Who</th>
            <th scope="col">On</th>
            <th scope="col">From</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr
              key={r.seq}
              data-seq={r.seq}
              data-action={r.action}
              class={r.decision === 'denied' ? 'denied' : undefined}
            >
              <td>{r.seq}</td>
              <td>{when(r.at)}</td>
              <td>
                {r.action}
                {r.decision === 'denied' && <strong> (refused)</strong>}
              </td>
              <td>
                {r.actor.account_id === profile.id ? 'you' : (r.actor.account_id ?? '—')}
                {r.actor.role && ` (${r.actor.role})`}
              </td>
              <td>{targetsOf(r)}</td>
              <td title={r.user_agent ?? undefined}>{r.client_address ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 && !error && <p data-testid="audit-empty">No rows match.</p>}
      {more && (
        <button type="button" onClick={() => load(true)}>
          Older
        </button>
      )}
    </section>
  );
}
