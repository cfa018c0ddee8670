import { useEffect, useState } from 'preact/hooks';
import { ApiError, call, callNoContent, client } from '../../api/client';
import type { paths } from '../../api/schema';
import { type Profile, roleAtLeast } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';

export type Installation =
  paths['/v1/apps/installations']['get']['responses'][200]['content']['application/json']['installations'][number];
type Host = Profile['scm_hosts'][number];

/** Whether the host has a GitHub App: `GET /v1/me` names its slug. */
export const mayHaveApp = (host: Host) => host.app !== undefined;

/** The workspace's claimed installations, as read for the account page; `installations` is null while unread. */
export interface Installations {
  installations: Installation[] | null;
  error: unknown;
  reload: () => void;
}

/**
 * Reads the installations the workspace claimed, where a host may have an app and the role may read
 * them (a member and above, as the API allows; not a demo); elsewhere they stay null and nothing is asked.
 */
export function useInstallations(profile: Profile): Installations {
  // A demo token may not read them (nor see the code hosts' section).
  const reads = profile.plan !== 'demo' && roleAtLeast(profile.role, 'member') && profile.scm_hosts.some(mayHaveApp);
  const [installations, setInstallations] = useState<Installation[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const reload = () => {
    setError(null);
    call(client.GET('/v1/apps/installations')).then((r) => setInstallations(r.installations), setError);
  };
  useEffect(() => {
    if (reads) reload();
    else setInstallations(null);
  }, [reads]);
  return { installations, error, reload };
}

/** GitHub's account types in words. */
const ACCOUNT_TYPES: Record<string, string> = { Organization: 'organisation', User: 'user' };

/**
 * A GitHub host's app: the installations this workspace claimed there (account, type, who claimed
 * it, whether it is suspended) and, for the workspace's owner, installing (the browser goes to
 * GitHub's install page; GitHub, the setup URL and the app's sign-in bring it back to emend, which
 * claims the installation) and releasing one. Others read the list; with none, nothing is shown.
 */
export function GitHubApp({
  host,
  label,
  installations,
  owner,
  reload,
}: {
  host: Host;
  label: string;
  installations: Installation[];
  owner: boolean;
  reload: () => void;
}) {
  const [error, setError] = useState<unknown>(null);
  const [noApp, setNoApp] = useState(false);
  if (!owner && installations.length === 0) return null;

  const install = async () => {
    setError(null);
    try {
      const { install_url } = await call(
        client.GET('/v1/apps/{host}/install', { params: { path: { host: host.host } } }),
      );
      // A navigation, not a fetch: the install is bound to this browser by the cookie just set.
      location.assign(install_url);
    } catch (err) {
      if (err instanceof ApiError && err.code === 'not_found') setNoApp(true);
      else setError(err);
    }
  };
  const release = async (inst: Installation) => {
    setError(null);
    if (
      !confirm(
        `Release the installation on ${inst.account}? emend stops acting as the app there; the app stays installed on ${label}.`,
      )
    )
      return;
    try {
      await callNoContent(
        client.DELETE('/v1/apps/{host}/installations/{id}', {
          params: { path: { host: host.host, id: inst.installation_id } },
        }),
      );
      reload();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <section class="github-app" aria-label={`${label} App`}>
      <h4>GitHub App</h4>
      {installations.length === 0 ? (
        <p data-testid="no-installations">
          No installation is claimed by this workspace. Installed on an organisation (or your own account), the app acts
          there under its own name, and the workspace’s members need no token of their own; you must administer the
          account you install it on.
        </p>
      ) : (
        <table class="installations">
          <caption class="sr-only">{`The ${label} App’s installations claimed by this workspace`}</caption>
          <thead>
            <tr>
              <th scope="col">Account</th>
              <th scope="col">Type</th>
              <th scope="col">Claimed by</th>
              <th scope="col">State</th>
              {owner && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {installations.map((inst) => (
              <tr key={inst.installation_id} data-installation={inst.installation_id}>
                <td>{inst.account}</td>
                <td>{ACCOUNT_TYPES[inst.account_type] ?? inst.account_type}</td>
                <td>
                  {inst.claimed_as ?? '—'}
                  {inst.claimed_at ? ` on ${when(inst.claimed_at)}` : ''}
                </td>
                <td>
                  {inst.suspended
                    ? `suspended on ${label}: its repositories’ tasks stop until it is unsuspended there`
                    : 'active'}
                </td>
                {owner && (
                  <td class="actions">
                    <button type="button" class="link" onClick={() => void release(inst)}>
                      Release
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {owner &&
        (noApp ? (
          <p data-testid="no-app">
            This server has no GitHub App for {label}: its operator adds one to the host’s entry of EMEND_SCM_HOSTS
            (docs/code-host.md, “As a GitHub App”).
          </p>
        ) : (
          <button type="button" onClick={() => void install()}>
            Install the GitHub App
          </button>
        ))}
      <ErrorNote error={error} />
    </section>
  );
}
