import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { Profile, WorkspaceInvitation, WorkspaceRole } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';
import { grantable } from './Members';
import { LOCAL_URL_WARNING, isLocalUrl } from '../../api/local-url';

/**
 * Invitations (a maintainer or the owner of a team workspace): made with a role, their one-time
 * link shown once; listed without secrets, each with the status the server reads (an invitation
 * whose inviter left, was removed or was demoted is revoked); a pending one revoked.
 */
export function Invitations({ profile }: { profile: Profile }) {
  const id = profile.workspace.id;
  const roles = grantable(profile.role);
  const [invitations, setInvitations] = useState<WorkspaceInvitation[]>([]);
  const [role, setRole] = useState<WorkspaceRole>('member');
  const [email, setEmail] = useState('');
  const [fresh, setFresh] = useState<{ url: string; role: WorkspaceRole } | null>(null);
  const [error, setError] = useState<unknown>(null);

  const load = () =>
    call(client.GET('/v1/workspaces/{id}/invitations', { params: { path: { id } } })).then(setInvitations, setError);
  useEffect(() => {
    void load();
  }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const made = await call(
        client.POST('/v1/workspaces/{id}/invitations', {
          params: { path: { id } },
          body: { role, ...(email.trim() ? { email: email.trim() } : {}) },
        }),
      );
      setFresh({ url: made.url, role: made.role });
      setEmail('');
      await load();
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (i: WorkspaceInvitation) => {
    setError(null);
    try {
      await call(
        client.DELETE('/v1/workspaces/{id}/invitations/{invitation_id}', {
          params: { path: { id, invitation_id: i.id } },
        }),
      );
      await load();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div class="card">
      <h2>Invitations</h2>
      {fresh && (
        <div class="secret" role="status">
          <p>
            The invitation’s link, for a {fresh.role}. Send it to the person you invite; it is shown this once, works
            once and expires. Whoever holds it can join, so send it privately.
          </p>
          <input
            aria-label="The invitation link"
            readOnly
            value={fresh.url}
            data-testid="invitation-link"
            onFocus={(e) => e.currentTarget.select()}
          />
          {isLocalUrl(fresh.url) && (
            <p class="warning" data-testid="invitation-link-local">
              {LOCAL_URL_WARNING}
            </p>
          )}
          <button type="button" onClick={() => setFresh(null)}>
            I have sent it
          </button>
        </div>
      )}
      <form class="form inline-form" onSubmit={create} aria-label="Invite someone">
        <label for="invite-role">Role</label>
        <select id="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as WorkspaceRole)}>
          {roles.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <label for="invite-email">Email (a note, optional)</label>
        <input
          id="invite-email"
          type="email"
          maxLength={254}
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <button type="submit">Create invitation</button>
      </form>
      {invitations.length === 0 ? (
        <p>No invitations yet.</p>
      ) : (
        <table class="invitations">
          <caption class="sr-only">The workspace’s invitations, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Role</th>
              <th scope="col">For</th>
              <th scope="col">State</th>
              <th scope="col">Expires</th>
              <th scope="col">Created</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {invitations.map((i) => (
              <tr key={i.id} data-invitation={i.id} data-state={i.status}>
                <td>{i.role}</td>
                <td>{i.email ?? '—'}</td>
                <td>{i.status}</td>
                <td>{when(i.expires_at)}</td>
                <td>{when(i.created_at)}</td>
                <td>
                  {i.status === 'pending' && (
                    <button
                      type="button"
                      class="link"
                      onClick={() => void revoke(i)}
                      aria-label={`Revoke the ${i.role} invitation${i.email ? ` for ${i.email}` : ''}`}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <ErrorNote error={error} />
    </div>
  );
}
