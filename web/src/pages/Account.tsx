import { useEffect, useState } from 'preact/hooks';
import { type Profile, api } from '../api';
import { ErrorNote } from '../components/ErrorNote';
import { when } from '../components/Status';

interface Limits {
  limits: { monthly: number; concurrent: number; maxFiles: number; maxRetries: number; mode: string };
  used_this_month: number;
  plan: string;
}
interface KeyRecord {
  provider: string;
  last4: string;
  base_url: string | null;
  default_model: string | null;
  created_at: string;
}
interface TokenRecord {
  id: string;
  name: string;
  kind: string;
  last4: string;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

const PROVIDERS = ['openai', 'anthropic', 'google'];
const value = (e: Event) => (e.target as HTMLInputElement).value;

export function AccountPage({ profile, reload }: { profile: Profile; reload: () => void }) {
  const demo = profile.plan === 'demo';
  const [limits, setLimits] = useState<Limits | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    api<Limits>('GET', '/v1/tasks/limits').then(setLimits, setError);
  }, []);

  return (
    <section class="account">
      <h1 tabIndex={-1}>Account</h1>
      <ErrorNote error={error} />
      <div class="card">
        <h2>Profile</h2>
        <dl class="facts">
          <dt>Email</dt>
          <dd>{profile.email}</dd>
          {profile.name && (
            <>
              <dt>Name</dt>
              <dd>{profile.name}</dd>
            </>
          )}
          <dt>Plan</dt>
          <dd data-testid="plan">{profile.plan}</dd>
          <dt>Credits</dt>
          <dd data-testid="credits">{profile.credits}</dd>
          {limits && (
            <>
              <dt>Tasks this month</dt>
              <dd>
                <meter
                  min={0}
                  max={limits.limits.monthly}
                  value={limits.used_this_month}
                  aria-label="Tasks used this month"
                />{' '}
                {limits.used_this_month} of {limits.limits.monthly}
                {profile.use_byok ? ' (no monthly limit with your own keys)' : ''}
              </dd>
              <dt>Limits</dt>
              <dd>
                {limits.limits.concurrent} running at once · up to {limits.limits.maxFiles} files ·{' '}
                {limits.limits.maxRetries} retries · {limits.limits.mode === 'pr' ? 'pull requests' : 'previews'}
              </dd>
            </>
          )}
        </dl>
      </div>
      {demo ? (
        <p class="card">
          This is a demo account: it can create and read tasks only. Provider keys, tokens and the code-host connection
          need a full account.
        </p>
      ) : (
        <>
          <Byok profile={profile} reload={reload} />
          <Keys />
          <Tokens />
          <CodeHost profile={profile} reload={reload} />
          <div class="card">
            <h2>Training data</h2>
            <p>Your finished tasks with their plans, diffs and feedback, one JSON object per line.</p>
            <a class="button" href="/v1/me/training/export.jsonl" download="emend-training.jsonl">
              Download the export (JSON Lines)
            </a>
          </div>
        </>
      )}
    </section>
  );
}

function Byok({ profile, reload }: { profile: Profile; reload: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const toggle = async (enabled: boolean) => {
    setError(null);
    try {
      await api('POST', '/v1/me/byok', { enabled });
      reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card">
      <h2>Model provider</h2>
      <label class="inline">
        <input
          type="checkbox"
          checked={profile.use_byok}
          onChange={(e) => toggle((e.target as HTMLInputElement).checked)}
        />{' '}
        Use my own provider keys (BYOK): the provider bills me, no credits are used
      </label>
      <ErrorNote error={error} />
    </div>
  );
}

function Keys() {
  const [keys, setKeys] = useState<KeyRecord[]>([]);
  const [provider, setProvider] = useState('openai');
  const [secret, setSecret] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [result, setResult] = useState('');
  const [error, setError] = useState<unknown>(null);

  const load = () => api<KeyRecord[]>('GET', '/v1/me/keys').then(setKeys, setError);
  useEffect(() => {
    void load();
  }, []);

  const body = () => ({ provider, api_key: secret.trim(), ...(baseUrl.trim() ? { base_url: baseUrl.trim() } : {}) });
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setResult('');
    try {
      await api('POST', '/v1/me/keys', body());
      setSecret('');
      setResult(`Saved the ${provider} key.`);
      await load();
    } catch (err) {
      setError(err);
    }
  };
  const test = async () => {
    setError(null);
    setResult('Testing…');
    try {
      const r = await api<{ ok: boolean; models?: number; error?: string }>('POST', '/v1/me/keys/test', body());
      setResult(r.ok ? `The key works: ${r.models} models available.` : `The provider refused the key: ${r.error}`);
    } catch (err) {
      setResult('');
      setError(err);
    }
  };
  const remove = async (p: string) => {
    setError(null);
    try {
      await api('DELETE', `/v1/me/keys/${p}`);
      await load();
    } catch (err) {
      setError(err);
    }
  };

  return (
    <div class="card">
      <h2>Provider keys</h2>
      {keys.length === 0 ? (
        <p>No keys saved.</p>
      ) : (
        <ul class="keys">
          {keys.map((k) => (
            <li key={k.provider}>
              {k.provider} key ending in <code>{k.last4}</code>
              {k.base_url ? ` at ${k.base_url}` : ''} · saved {when(k.created_at)}{' '}
              <button
                type="button"
                class="link"
                onClick={() => remove(k.provider)}
                aria-label={`Delete the ${k.provider} key`}
              >
                Delete
              </button>
            </li>
          ))}
        </ul>
      )}
      <form class="form" onSubmit={save} aria-label="Save a provider key">
        <label for="key-provider">Provider</label>
        <select id="key-provider" value={provider} onChange={(e) => setProvider(value(e))}>
          {PROVIDERS.map((p) => (
            <option key={p} value={p}>
              {p}
            </option>
          ))}
        </select>
        <label for="key-secret">API key</label>
        <input
          id="key-secret"
          type="password"
          autocomplete="off"
          required
          value={secret}
          onInput={(e) => setSecret(value(e))}
        />
        <label for="key-base">Server URL (optional, for an OpenAI-compatible server)</label>
        <input id="key-base" type="url" value={baseUrl} onInput={(e) => setBaseUrl(value(e))} />
        <div class="actions">
          <button type="submit">Save key</button>
          <button type="button" onClick={test} disabled={!secret.trim()}>
            Test key
          </button>
        </div>
        {result && <p role="status">{result}</p>}
      </form>
      <ErrorNote error={error} />
    </div>
  );
}

function Tokens() {
  const [tokens, setTokens] = useState<TokenRecord[]>([]);
  const [name, setName] = useState('');
  const [fresh, setFresh] = useState<{ name: string; secret: string } | null>(null);
  const [copied, setCopied] = useState('');
  const [error, setError] = useState<unknown>(null);

  const load = () => api<TokenRecord[]>('GET', '/v1/me/tokens').then(setTokens, setError);
  useEffect(() => {
    void load();
  }, []);

  const create = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setCopied('');
    try {
      const made = await api<TokenRecord & { token: string }>(
        'POST',
        '/v1/me/tokens',
        name.trim() ? { name: name.trim() } : {},
      );
      setFresh({ name: made.name, secret: made.token });
      setName('');
      await load();
    } catch (err) {
      setError(err);
    }
  };
  const revoke = async (t: TokenRecord) => {
    if (!confirm(`Revoke the token “${t.name || t.last4}”? Programs using it stop working.`)) return;
    setError(null);
    try {
      await api('DELETE', `/v1/me/tokens/${t.id}`);
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
            onFocus={(e) => (e.target as HTMLInputElement).select()}
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
        <input id="token-name" type="text" maxLength={100} value={name} onInput={(e) => setName(value(e))} />
        <button type="submit">Create token</button>
      </form>
      <table class="tokens">
        <caption class="sr-only">Your tokens</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Ends in</th>
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
      <ErrorNote error={error} />
    </div>
  );
}

function CodeHost({ profile, reload }: { profile: Profile; reload: () => void }) {
  const [token, setToken] = useState('');
  const [oauth, setOauth] = useState(false);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    api<{ oauth: boolean }>('GET', '/v1/auth/methods').then(
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
      await api('POST', '/v1/me/scm', { token: secret });
      reload();
    } catch (err) {
      setError(err);
    }
  };
  const oauthConnect = async () => {
    setError(null);
    try {
      const { authorize_url } = await api<{ authorize_url: string }>('GET', '/v1/auth/scm/start');
      location.assign(authorize_url);
    } catch (err) {
      setError(err);
    }
  };
  const disconnect = async () => {
    setError(null);
    try {
      await api('DELETE', '/v1/me/scm');
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
              onInput={(e) => setToken(value(e))}
            />
            <button type="submit">Connect</button>
          </form>
        </>
      )}
      <ErrorNote error={error} />
    </div>
  );
}
