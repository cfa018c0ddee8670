import { useState } from 'preact/hooks';
import { call, callNoContent, client } from '../api/client';
import { type Profile, type Workspace, roleAtLeast } from '../api/types';
import { ErrorNote } from '../components/ErrorNote';
import { navigate } from '../router';
import { Invitations } from './workspace/Invitations';
import { Members } from './workspace/Members';
import { SpendLimits, SpendNotices, useSpendLimits } from './workspace/SpendLimits';

/**
 * The workspace the session acts in: what it is and one's role there, its members (role changes
 * and removals for a maintainer or the owner), its invitations (the same), leaving it, and making
 * a team workspace. Controls follow the profile's role; the API's 403 still decides, and is shown.
 */
export function WorkspacePage({
  profile,
  workspaces,
  reload,
}: {
  profile: Profile;
  workspaces: Workspace[] | null;
  reload: () => Promise<void>;
}) {
  const { workspace, role } = profile;
  const manages = roleAtLeast(role, 'maintainer');
  const [error, setError] = useState<unknown>(null);
  const spend = useSpendLimits(workspace.id);

  const remove = async () => {
    if (
      !confirm(
        `Delete the workspace “${workspace.name}”? Its tasks, members, keys, connections and settings go; its credit ledger stays. This cannot be undone.`,
      )
    )
      return;
    setError(null);
    try {
      await callNoContent(client.DELETE('/v1/workspaces/{id}', { params: { path: { id: workspace.id } } }));
      navigate('/app/');
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  const leave = async () => {
    if (!confirm(`Leave the workspace “${workspace.name}”? Your tokens for it are revoked.`)) return;
    setError(null);
    try {
      await callNoContent(client.POST('/v1/workspaces/{id}/leave', { params: { path: { id: workspace.id } } }));
      navigate('/app/');
      await reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="workspace">
      <h1 tabIndex={-1}>Workspace</h1>
      <SpendNotices limits={spend.limits} />
      <div class="card">
        <h2 data-testid="workspace-name">{workspace.name}</h2>
        <dl class="facts">
          <dt>Kind</dt>
          <dd>{workspace.personal ? 'personal (yours alone)' : 'team'}</dd>
          <dt>Your role</dt>
          <dd data-testid="role">{role}</dd>
          <dt>Plan</dt>
          <dd data-testid="workspace-plan">{profile.plan}</dd>
          <dt>Credits</dt>
          <dd data-testid="workspace-credits">{profile.credits}</dd>
        </dl>
        {!workspace.personal && profile.plan === 'free' && profile.credits === 0 && <Unfunded id={workspace.id} />}
        {!workspace.personal && role !== 'owner' && (
          <div class="actions">
            <button type="button" class="danger" onClick={leave}>
              Leave this workspace
            </button>
          </div>
        )}
        {!workspace.personal && role === 'owner' && (
          <div class="actions">
            <a
              class="button"
              href={`/v1/workspaces/${workspace.id}/export`}
              download={`emend-workspace-${workspace.id}.json`}
            >
              Export the workspace (JSON)
            </a>
            <button type="button" class="danger" onClick={remove}>
              Delete this workspace
            </button>
          </div>
        )}
        <ErrorNote error={error} />
      </div>
      <SpendLimits profile={profile} limits={spend.limits} setLimits={spend.setLimits} loadError={spend.error} />
      <Members profile={profile} manages={manages} reload={reload} />
      {manages && !workspace.personal && <Invitations profile={profile} />}
      {workspaces && <NewWorkspace reload={reload} />}
    </section>
  );
}

/**
 * A team workspace starts on the free plan with no credits (docs/teams.md): what that allows and
 * how it changes. Only the operator funds a workspace (PATCH /v1/admin/workspaces/{id}); BYOK,
 * which an owner or maintainer turns on, spends no credits.
 */
function Unfunded({ id }: { id: string }) {
  return (
    <p class="hint" data-testid="workspace-unfunded">
      This workspace is on the free plan with no credits: its tasks run as previews, without a pull request. For pull
      requests, ask the server's operator to set its plan and credits (an admin's{' '}
      <code>PATCH /v1/admin/workspaces/{id}</code>). Or an owner or maintainer turns on “Use my own provider keys” under
      Account → Model provider: the provider bills you, no credits are used, and a finished preview continues to a pull
      request.
    </p>
  );
}

/** A team workspace: made with its maker as owner, then the session switches to it. */
function NewWorkspace({ reload }: { reload: () => Promise<void> }) {
  const [name, setName] = useState('');
  const [error, setError] = useState<unknown>(null);
  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const made = await call(client.POST('/v1/workspaces', { body: { name: name.trim() } }));
      await call(client.POST('/v1/auth/session/workspace', { body: { workspace_id: made.id } }));
      setName('');
      await reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card">
      <h2>New team workspace</h2>
      <p class="hint">
        A team workspace has its own tasks, settings, keys and credits; you are its owner, and invite the others.
      </p>
      <form class="form inline-form" onSubmit={create} aria-label="Create a team workspace">
        <label for="workspace-new-name">Name of the new workspace</label>
        <input
          id="workspace-new-name"
          type="text"
          required
          maxLength={100}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <button type="submit">Create workspace</button>
      </form>
      <ErrorNote error={error} />
    </div>
  );
}
