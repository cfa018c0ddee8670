import { useState } from 'preact/hooks';
import { call, client } from '../api/client';
import type { Workspace } from '../api/types';
import { ErrorNote } from '../components/ErrorNote';
import { navigate } from '../router';

/**
 * An invitation's link (/app/#/invitation/<secret>): accepting it, by a click of the signed-in
 * account (opening the link alone joins nothing), calls POST /v1/invitations/accept. Once it is
 * spent, the secret leaves the address bar and the history entry.
 */
export function InvitationPage({ secret, reload }: { secret: string; reload: () => Promise<void> }) {
  const [joined, setJoined] = useState<Workspace | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const accept = async () => {
    setBusy(true);
    setError(null);
    try {
      const ws = await call(client.POST('/v1/invitations/accept', { body: { token: secret } }));
      history.replaceState(null, '', '/app/');
      setJoined(ws);
      // The switcher lists the workspace joined.
      await reload();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const open = async () => {
    setError(null);
    try {
      await call(client.POST('/v1/auth/session/workspace', { body: { workspace_id: joined!.id } }));
      await reload();
      navigate('/app/workspace');
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="invitation">
      <h1 tabIndex={-1}>Join a workspace</h1>
      {joined ? (
        <div class="card" role="status">
          <p data-testid="joined">
            You joined <strong>{joined.name}</strong> as {joined.role}.
          </p>
          <button type="button" onClick={open}>
            Switch to {joined.name}
          </button>
        </div>
      ) : (
        <div class="card">
          <p>
            This link invites you into a workspace: its tasks, settings and credits, with the role the invitation gives.
            It works once, and expires.
          </p>
          <button type="button" onClick={accept} disabled={busy}>
            Accept the invitation
          </button>
        </div>
      )}
      <ErrorNote error={error} />
    </section>
  );
}
