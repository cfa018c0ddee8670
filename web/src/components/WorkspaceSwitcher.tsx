import { call, client } from '../api/client';
import type { Profile, Workspace } from '../api/types';

/** A workspace as the switcher names it: its name, whose it is, and one's role there. */
export const workspaceLabel = (w: Pick<Workspace, 'name' | 'personal' | 'role'>) =>
  `${w.name}${w.personal ? ' (personal)' : ''} · ${w.role}`;

/**
 * The workspace the panel's session acts in, chosen among the account's workspaces: choosing one
 * points the session at it (POST /v1/auth/session/workspace); `switched` then reloads what the
 * panel shows (the profile's plan, credits and role, and the page).
 */
export function WorkspaceSwitcher({
  profile,
  workspaces,
  switched,
  failed,
}: {
  profile: Profile;
  workspaces: Workspace[];
  switched: () => void;
  failed: (err: unknown) => void;
}) {
  const choose = async (select: HTMLSelectElement) => {
    const id = select.value;
    try {
      await call(client.POST('/v1/auth/session/workspace', { body: { workspace_id: id } }));
      switched();
    } catch (err) {
      select.value = profile.workspace.id;
      failed(err);
    }
  };
  const listed = workspaces.some((w) => w.id === profile.workspace.id);
  return (
    <span class="switcher" data-workspace={profile.workspace.id}>
      <label for="workspace-switch">Workspace</label>
      <select id="workspace-switch" value={profile.workspace.id} onChange={(e) => void choose(e.currentTarget)}>
        {!listed && (
          <option value={profile.workspace.id}>{workspaceLabel({ ...profile.workspace, role: profile.role })}</option>
        )}
        {workspaces.map((w) => (
          <option key={w.id} value={w.id}>
            {workspaceLabel(w)}
          </option>
        ))}
      </select>
    </span>
  );
}
