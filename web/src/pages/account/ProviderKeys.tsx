import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { ProviderKey } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';

type Provider = ProviderKey['provider'];
const PROVIDERS: readonly Provider[] = ['openai', 'anthropic', 'google'];

/** The account's provider keys: listed (metadata only), saved, tested against the provider, deleted. */
export function ProviderKeys() {
  const [keys, setKeys] = useState<ProviderKey[]>([]);
  const [provider, setProvider] = useState<Provider>('openai');
  const [secret, setSecret] = useState('');
  const [baseUrl, setBaseUrl] = useState('');
  const [contextWindow, setContextWindow] = useState('');
  const [result, setResult] = useState('');
  const [error, setError] = useState<unknown>(null);

  const load = () => call(client.GET('/v1/me/keys')).then(setKeys, setError);
  useEffect(() => {
    void load();
  }, []);

  const body = () => ({ provider, api_key: secret.trim(), ...(baseUrl.trim() ? { base_url: baseUrl.trim() } : {}) });
  // The window is the key's setting, not part of a key test; the server checks its bounds.
  const window = () => (contextWindow.trim() ? { context_window: Number(contextWindow.trim()) } : {});
  const save = async (e: Event) => {
    e.preventDefault();
    setError(null);
    setResult('');
    try {
      await call(client.POST('/v1/me/keys', { body: { ...body(), ...window() } }));
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
      const r = await call(client.POST('/v1/me/keys/test', { body: body() }));
      setResult(r.ok ? `The key works: ${r.models} models available.` : `The provider refused the key: ${r.error}`);
    } catch (err) {
      setResult('');
      setError(err);
    }
  };
  const remove = async (p: Provider) => {
    setError(null);
    try {
      await call(client.DELETE('/v1/me/keys/{provider}', { params: { path: { provider: p } } }));
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
              {k.base_url ? ` at ${k.base_url}` : ''}
              {k.context_window ? `, context window ${k.context_window.toLocaleString('en')} tokens` : ''} · saved{' '}
              {when(k.created_at)}{' '}
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
        <select
          id="key-provider"
          value={provider}
          onChange={(e) => setProvider(PROVIDERS.find((p) => p === e.currentTarget.value) ?? 'openai')}
        >
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
          onInput={(e) => setSecret(e.currentTarget.value)}
        />
        <label for="key-base">Server URL (optional, for an OpenAI-compatible server)</label>
        <input id="key-base" type="url" value={baseUrl} onInput={(e) => setBaseUrl(e.currentTarget.value)} />
        <label for="key-window">Context window in tokens (optional, for a model the service does not know)</label>
        <input
          id="key-window"
          type="number"
          min={1024}
          step={1}
          value={contextWindow}
          onInput={(e) => setContextWindow(e.currentTarget.value)}
        />
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
