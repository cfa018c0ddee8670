import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { Profile } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';

/** The code-host connection: through OAuth where configured, or a pasted token; and disconnecting. */
export function CodeHost({ profile, reload }: { profile: Profile; reload: () => void }) {
  const [token, setToken] = useState('');
  const [oauth, setOauth] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    call(client.GET('/v1/auth/methods')).then(
      (m) => setOauth(m.oauth),
      () => setOauth(false),
    );
  }, []);

  const connect = async (e: Event) => {
    e.preventDefault();
    setError(null);
    const secret = token;
    setToken('');
    try {
      await call(client.POST('/v1/me/scm', { body: { token: secret } }));
      reload();
    } catch (err) {
      setError(err);
    }
  };
  const oauthConnect = async () => {
    setError(null);
    try {
      const { authorize_url } = await call(client.GET('/v1/auth/scm/start'));
      location.assign(authorize_url);
    } catch (err) {
      setError(err);
    }
  };
  const disconnect = async () => {
    setError(null);
    try {
      await call(client.DELETE('/v1/me/scm'));
      reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div class="card">
      <h2>Code host</h2>
      {profile.scm ? (
        <p>
          Connected to GitHub as <strong>{profile.scm}</strong>.{' '}
          <button type="button" onClick={disconnect}>
            Disconnect
          </button>
        </p>
      ) : (
        <>
          <p>Not connected. Pull requests need a connected GitHub account.</p>
          {oauth && (
            <button type="button" onClick={oauthConnect}>
              Connect with GitHub
            </button>
          )}
          <form class="form inline-form" onSubmit={connect} aria-label="Connect with a GitHub token">
            <label for="scm-token">GitHub personal access token (repo scope)</label>
            <input
              id="scm-token"
              type="password"
              autocomplete="off"
              required
              value={token}
              onInput={(e) => setToken(e.currentTarget.value)}
            />
            <button type="submit">Connect</button>
          </form>
        </>
      )}
      <ErrorNote error={error} />
    </div>
  );
}
