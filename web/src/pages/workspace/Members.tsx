import { useEffect, useState } from 'preact/hooks';
import { call, callNoContent, client } from '../../api/client';
import { type Profile, ROLES, type WorkspaceMember, type WorkspaceRole, roleAtLeast } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';

/** The roles someone of `role` may give: below owner (ownership moves by transfer), and not above their own. */
export const grantable = (role: WorkspaceRole) => ROLES.filter((r) => r !== 'owner' && roleAtLeast(role, r));

/**
 * The workspace's members, owner first. A maintainer or the owner (`manages`) gets a role choice
 * and a removal for every member but the owner and themselves (they leave instead); the owner of a
 * team workspace can make another member the owner (and stays, as a maintainer).
 */
export function Members({
  profile,
  manages,
  reload,
}: {
  profile: Profile;
  manages: boolean;
  reload: () => Promise<void>;
}) {
  const id = profile.workspace.id;
  const [members, setMembers] = useState<WorkspaceMember[] | null>(null);
  const [said, setSaid] = useState('');
  const [error, setError] = useState<unknown>(null);

  const load = () =>
    call(client.GET('/v1/workspaces/{id}/members', { params: { path: { id } } })).then(setMembers, setError);
  useEffect(() => {
    void load();
  }, []);

  const controls = (m: WorkspaceMember) => manages && m.role !== 'owner' && m.account_id !== profile.id;
  const who = (m: WorkspaceMember) => m.name || m.email;

  const setRole = async (m: WorkspaceMember, select: HTMLSelectElement) => {
    const role = select.value as WorkspaceRole;
    setError(null);
    setSaid('');
    let note = '';
    try {
      const changed = await call(
        client.PATCH('/v1/workspaces/{id}/members/{account_id}', {
          params: { path: { id, account_id: m.account_id } },
          body: { role },
        }),
      );
      note = `${who(changed)} is now ${changed.role}.`;
    } catch (err) {
      select.value = m.role;
      setError(err);
    }
    // The list first, then the note: when the note shows, the list it speaks of is current.
    await load();
    setSaid(note);
  };
  const remove = async (m: WorkspaceMember) => {
    if (!confirm(`Remove ${who(m)} from the workspace? Their tokens for it are revoked.`)) return;
    setError(null);
    setSaid('');
    let note = '';
    try {
      await callNoContent(
        client.DELETE('/v1/workspaces/{id}/members/{account_id}', {
          params: { path: { id, account_id: m.account_id } },
        }),
      );
      note = `${who(m)} was removed.`;
    } catch (err) {
      setError(err);
    }
    await load();
    setSaid(note);
  };

  const transfer = async (m: WorkspaceMember) => {
    if (!confirm(`Make ${who(m)} the owner of the workspace? You stay, as a maintainer.`)) return;
    setError(null);
    setSaid('');
    try {
      setMembers(
        await call(
          client.POST('/v1/workspaces/{id}/transfer', { params: { path: { id } }, body: { account_id: m.account_id } }),
        ),
      );
      setSaid(`${who(m)} is now the owner.`);
      // one's own role changed: the profile, and with it the controls, follow
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  const transfers = profile.role === 'owner' && !profile.workspace.personal;

  return (
    <div class="card">
      <h2>Members</h2>
      {members && (
        <table class="members">
          <caption class="sr-only">The workspace’s members, owner first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Since</th>
              {manages && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {members.map((m) => (
              <tr key={m.account_id} data-member={m.account_id} data-role={m.role}>
                <td>
                  {m.name || '—'}
                  {m.account_id === profile.id ? ' (you)' : ''}
                </td>
                <td>{m.email}</td>
                <td>
                  {controls(m) ? (
                    <select
                      aria-label={`Role of ${m.email}`}
                      value={m.role}
                      onChange={(e) => void setRole(m, e.currentTarget)}
                    >
                      {[...new Set([...grantable(profile.role), m.role])].map((r) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    m.role
                  )}
                </td>
                <td>{when(m.since)}</td>
                {manages && (
                  <td>
                    {controls(m) && (
                      <button
                        type="button"
                        class="link"
                        onClick={() => void remove(m)}
                        aria-label={`Remove ${m.email}`}
                      >
                        Remove
                      </button>
                    )}
                    {controls(m) && transfers && (
                      <button
                        type="button"
                        class="link"
                        onClick={() => void transfer(m)}
                        aria-label={`Make ${m.email} the owner`}
                      >
                        Make owner
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {said && <p role="status">{said}</p>}
      <ErrorNote error={error} />
    </div>
  );
}
