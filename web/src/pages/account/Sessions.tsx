import { useEffect, useState } from 'preact/hooks';
import { call, callNoContent, client } from '../../api/client';
import type { Profile, Workspace } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';
import { workspaceNameOf } from './workspace-name';

type PanelSession = Awaited<ReturnType<typeof loadSessions>>[number];
const loadSessions = () => call(client.GET('/v1/me/sessions'));

/**
 * The person's live control-panel sessions (this browser marked), each ended with one click: a
 * browser left signed in elsewhere is signed out. Ending this browser's own signs it out here too.
 */
export function Sessions({ profile, workspaces }: { profile: Profile; workspaces: Workspace[] | null }) {
  const [sessions, setSessions] = useState<PanelSession[]>([]);
  const [error, setError] = useState<unknown>(null);
  const load = () => loadSessions().then(setSessions, setError);
  useEffect(() => {
    void load();
  }, []);

  const end = async (s: PanelSession) => {
    const what = s.current ? 'This signs this browser out.' : 'That browser is signed out.';
    if (!confirm(`End the session signed in ${when(s.created_at)}? ${what}`)) return;
    setError(null);
    try {
      await callNoContent(client.DELETE('/v1/me/sessions/{id}', { params: { path: { id: s.id } } }));
      if (s.current) window.location.reload();
      else await load();
    } catch (err) {
      setError(err);
    }
  };
  const workspaceName = workspaceNameOf(profile, workspaces);

  return (
    <div class="card">
      <h2>Signed-in browsers</h2>
      <table class="tokens" data-testid="sessions">
        <caption class="sr-only">Your control-panel sessions</caption>
        <thead>
          <tr>
            <th scope="col">Browser</th>
            <th scope="col">From</th>
            <th scope="col">Workspace</th>
            <th scope="col">Signed in</th>
            <th scope="col">Ends</th>
            <th scope="col">
              <span class="sr-only">End</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((s) => (
            <tr key={s.id} data-session={s.id}>
              <td>
                {s.user_agent ?? 'unknown browser'}
                {s.current && <strong> (this browser)</strong>}
              </td>
              <td>{s.client_address ?? 'unknown'}</td>
              <td>{workspaceName(s.workspace_id)}</td>
              <td>{when(s.created_at)}</td>
              <td>{when(s.expires_at)}</td>
              <td>
                <button
                  type="button"
                  class="link"
                  onClick={() => end(s)}
                  aria-label={
                    s.current ? 'End this browser’s session' : `End the session signed in ${when(s.created_at)}`
                  }
                >
                  End
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <ErrorNote error={error} />
    </div>
  );
}
