import type { Profile, Workspace } from '../../api/types';

/**
 * A workspace's name for a row that names it by id (a token's, a session's): from the list of the
 * person's workspaces, else the one the panel acts in, else the id itself (the list not loaded yet).
 */
export const workspaceNameOf =
  (profile: Profile, workspaces: Workspace[] | null) =>
  (id: string): string =>
    workspaces?.find((w) => w.id === id)?.name ?? (id === profile.workspace.id ? profile.workspace.name : id);
