import { useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import { HOST_KINDS } from '../../api/host-kinds';
import type { Profile } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { GitHubApp, type Installation, type Installations, mayHaveApp } from './GitHubApp';

type Host = Profile['scm_hosts'][number];

/** The host's name for people: its product, with the operator's id when there are several of a kind. */
const labelOf = (host: Host) => {
  const product = HOST_KINDS[host.kind].productName;
  return host.host === host.kind ? product : `${product} (${host.host})`;
};

/**
 * One host's connection: through OAuth where its app is configured, or a pasted token; and
 * disconnecting. Only the workspace's owner (`owner`) connects and disconnects; the others read it.
 * A GitHub host's app installations (`installations`: null where not read) follow the connection.
 */
function HostConnection({
  host,
  reload,
  owner,
  installations,
  reloadInstallations,
}: {
  host: Host;
  reload: () => void;
  owner: boolean;
  installations: Installation[] | null;
  reloadInstallations: () => void;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<unknown>(null);
  const label = labelOf(host);
  const act = async (run: () => Promise<unknown>) => {
    setError(null);
    try {
      await run();
    } catch (err) {
      setError(err);
    }
  };
  const connect = (e: Event) => {
    e.preventDefault();
    const secret = token;
    setToken('');
    return act(async () => {
      await call(client.POST('/v1/me/scm', { body: { token: secret, host: host.host } }));
      reload();
    });
  };
  const oauthConnect = () =>
    act(async () => {
      const { authorize_url } = await call(
        client.GET('/v1/auth/scm/start', { params: { query: { host: host.host } } }),
      );
      location.assign(authorize_url);
    });
  const disconnect = () =>
    act(async () => {
      await call(client.DELETE('/v1/me/scm', { params: { query: { host: host.host } } }));
      reload();
    });

  return (
    <section aria-label={label}>
      <h3>{label}</h3>
      {host.login ? (
        <p>
          Connected to {label} as <strong>{host.login}</strong>.{' '}
          {owner && (
            <button type="button" onClick={disconnect}>
              Disconnect
            </button>
          )}
        </p>
      ) : !owner ? (
        <p>Not connected. The workspace’s owner connects it.</p>
      ) : (
        <>
          <p>
            Not connected. Pull requests on <code>{host.web_url}</code> need a connected {label} account.
          </p>
          {host.oauth && (
            <button type="button" onClick={oauthConnect}>
              Connect with {label}
            </button>
          )}
          <form class="form inline-form" onSubmit={connect} aria-label={`Connect with a ${label} token`}>
            <label for={`scm-token-${host.host}`}>
              {label} {HOST_KINDS[host.kind].tokenHint}
            </label>
            <input
              id={`scm-token-${host.host}`}
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
      {installations && (
        <GitHubApp
          host={host}
          label={label}
          installations={installations.filter((inst) => inst.host === host.host)}
          owner={owner}
          reload={reloadInstallations}
        />
      )}
    </section>
  );
}

/**
 * The workspace's code-host connections: one per host of this server, the default first; on a
 * GitHub host that may have an app, the installations the workspace claimed there (`apps`, read by
 * the account page, which also enables the repository settings with them).
 */
export function CodeHost({
  profile,
  reload,
  owner,
  apps,
}: {
  profile: Profile;
  reload: () => void;
  owner: boolean;
  apps: Installations;
}) {
  return (
    <div class="card">
      <h2>{profile.scm_hosts.length > 1 ? 'Code hosts' : 'Code host'}</h2>
      {profile.scm_hosts.map((host) => (
        <HostConnection
          key={host.host}
          host={host}
          reload={reload}
          owner={owner}
          installations={mayHaveApp(host) ? apps.installations : null}
          reloadInstallations={apps.reload}
        />
      ))}
      <ErrorNote error={apps.error} />
    </div>
  );
}
