import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import { type Profile, TOKEN_SCOPES, type TokenRecord, type TokenScope, type Workspace } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';
import { workspaceNameOf } from './workspace-name';

/**
 * Personal access tokens: listed without secrets (with the workspace each acts in and its scopes),
 * created for the workspace the session acts in, narrowed to scopes if chosen (the secret shown
 * once), revoked.
 */
export function AccessTokens({ profile, workspaces }: { profile: Profile; workspaces: Workspace[] | null }) {
  const [tokens, setTokens] = useState<TokenRecord[]>([]);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<TokenScope[]>([]);
  const [fresh, setFresh] = useState<{ name: string; secret: string } | null>(null);
  const [copied, setCopied] = useState('');
  const [error, setError] = useState<unknown>(null);

  const load = () => call(client.GET('/v1/me/tokens')).then(setTokens, setError);
  useEffect(() => {
    void load();
  }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setCopied('');
    try {
      const body = {
        ...(name.trim() ? { name: name.trim() } : {}),
        ...(scopes.length ? { scopes: TOKEN_SCOPES.filter((s) => scopes.includes(s)) } : {}),
      };
      const made = await call(client.POST('/v1/me/tokens', { body }));
      setFresh({ name: made.name, secret: made.token });
      setName('');
      setScopes([]);
      await load();
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (t: TokenRecord) => {
    if (!confirm(`Revoke the token “${t.name || t.last4}”? Programs using it stop working.`)) return;
    setError(null);
    try {
      await call(client.DELETE('/v1/me/tokens/{id}', { params: { path: { id: t.id } } }));
      await load();
    } catch (err) {
      setError(err);
    }
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(fresh!.secret);
      setCopied('Copied.');
    } catch {
      setCopied('Copying is not allowed here: select the token and copy it.');
    }
  };

  return (
    <div class="card">
      <h2>Personal access tokens</h2>
      {fresh && (
        <div class="secret" role="status">
          <p>Your new token{fresh.name ? ` “${fresh.name}”` : ''}. Copy it now: it is shown this once.</p>
          <input
            aria-label="The new token"
            readOnly
            value={fresh.secret}
            data-testid="new-token"
            onFocus={(e) => e.currentTarget.select()}
          />
          <div class="actions">
            <button type="button" onClick={copy}>
              Copy
            </button>
            <button type="button" onClick={() => setFresh(null)}>
              I have copied it
            </button>
          </div>
          {copied && <p>{copied}</p>}
        </div>
      )}
      <form class="form inline-form" onSubmit={create} aria-label="Create a token">
        <label for="token-name">Name of the new token</label>
        <input
          id="token-name"
          type="text"
          maxLength={100}
          value={name}
          onInput={(e) => setName(e.currentTarget.value)}
        />
        <fieldset>
          <legend>Scopes (none chosen: all your role allows)</legend>
          {TOKEN_SCOPES.map((s) => (
            <label key={s} class="inline">
              <input
                type="checkbox"
                name="token-scopes"
                value={s}
                checked={scopes.includes(s)}
                onChange={() => setScopes((now) => (now.includes(s) ? now.filter((x) => x !== s) : [...now, s]))}
              />{' '}
              {s}
            </label>
          ))}
        </fieldset>
        <p class="hint">The token acts in the workspace “{profile.workspace.name}”, never above your role there.</p>
        <button type="submit">Create token</button>
      </form>
      <TokenTable tokens={tokens} revoke={revoke} workspaceName={workspaceNameOf(profile, workspaces)} />
      <ErrorNote error={error} />
    </div>
  );
}

function TokenTable({
  tokens,
  revoke,
  workspaceName,
}: {
  tokens: TokenRecord[];
  revoke: (t: TokenRecord) => void;
  workspaceName: (id: string) => string;
}) {
  return (
    <table class="tokens">
      <caption class="sr-only">Your tokens</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Secret ends in</th>
          <th scope="col">Workspace</th>
          <th scope="col">Scopes</th>
          <th scope="col">Created</th>
          <th scope="col">Last used</th>
          <th scope="col">State</th>
        </tr>
      </thead>
      <tbody>
        {tokens.map((t) => (
          <tr key={t.id} data-token={t.id}>
            <td>{t.name || '(unnamed)'}</td>
            <td>
              <code>…{t.last4}</code>
            </td>
            <td>{workspaceName(t.workspace_id)}</td>
            <td>{t.scopes ? t.scopes.join(', ') : 'all the role allows'}</td>
            <td>{when(t.created_at)}</td>
            <td>{t.last_used_at ? when(t.last_used_at) : 'never'}</td>
            <td>
              {t.revoked_at ? (
                'revoked'
              ) : (
                <button
                  type="button"
                  class="link"
                  onClick={() => revoke(t)}
                  aria-label={`Revoke the token ${t.name || `ending in ${t.last4}`}`}
                >
                  Revoke
                </button>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
