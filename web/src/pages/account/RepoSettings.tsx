import { useState } from 'preact/hooks';
import { ApiError, call, client } from '../../api/client';
import type { paths } from '../../api/schema';
import { ErrorNote } from '../../components/ErrorNote';
import { when } from '../../components/Status';
import { RepoTriggers, type Triggers } from './RepoTriggers';

const NONE = 'No settings for this repository yet.';

type Settings = paths['/v1/me/repos/settings']['get']['responses'][200]['content']['application/json'];

/** Parses `NAME=value` lines; blank lines are skipped. */
function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const at = line.indexOf('=');
    if (at <= 0) throw new Error(`"${line}" is not NAME=value`);
    env[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return env;
}

/** The answer, or null when the API says there is none (404). */
async function orNone<T>(request: Promise<T>): Promise<T | null> {
  try {
    return await request;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/**
 * Per-repository settings: the setup and test commands, variables, setup-only secrets (by name;
 * a value is sent once and never shown again), and the code-host triggers. Disabled until the
 * workspace has a code host connected or a GitHub App installation claimed (`connected`): no task
 * reaches a repository before that.
 */
export function RepoSettings({ connected }: { connected: boolean }) {
  const [repo, setRepo] = useState('');
  const [loaded, setLoaded] = useState<Settings | null>(null);
  const [setup, setSetup] = useState('');
  const [test, setTest] = useState('');
  const [envText, setEnvText] = useState('');
  /** '' : no default (one attempt). */
  const [attempts, setAttempts] = useState('');
  const [secretName, setSecretName] = useState('');
  const [secretValue, setSecretValue] = useState('');
  const [note, setNote] = useState('');
  const [error, setError] = useState<unknown>(null);
  // The repository the triggers part was loaded for; `key` starts it afresh on each Load.
  const [triggers, setTriggers] = useState<{ repo: string; value: Triggers | null; key: number } | null>(null);
  const query = () => ({ params: { query: { repo: repo.trim() } } });

  const show = (s: Settings | null) => {
    setLoaded(s);
    setSetup(s?.setup_command ?? '');
    setTest(s?.test_command ?? '');
    setEnvText(
      Object.entries(s?.env ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join('\n'),
    );
    setAttempts(s?.attempts ? String(s.attempts) : '');
  };
  const run = async (what: () => Promise<void>) => {
    setError(null);
    setNote('');
    try {
      await what();
    } catch (err) {
      setError(err);
    }
  };
  const load = (e?: Event) => {
    e?.preventDefault();
    return run(async () => {
      const [settings, trig] = await Promise.all([
        orNone(call(client.GET('/v1/me/repos/settings', query()))),
        orNone(call(client.GET('/v1/me/repos/triggers', query()))),
      ]);
      show(settings);
      if (!settings) setNote(NONE);
      setTriggers((t) => ({ repo: repo.trim(), value: trig, key: (t?.key ?? 0) + 1 }));
    });
  };
  const save = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      const env = parseEnv(envText);
      const removed = Object.keys(loaded?.env ?? {}).filter((k) => !(k in env));
      const body = {
        setup_command: setup.trim() ? setup : null,
        test_command: test.trim() ? test : null,
        env: { ...env, ...Object.fromEntries(removed.map((k) => [k, null])) },
        attempts: attempts ? Number(attempts) : null,
      };
      show(await call(client.PATCH('/v1/me/repos/settings', { ...query(), body })));
      setNote('Settings saved.');
    });
  };
  const saveSecret = (e: Event) => {
    e.preventDefault();
    return run(async () => {
      const body = { name: secretName.trim(), value: secretValue };
      await call(client.POST('/v1/me/repos/secrets', { ...query(), body }));
      setSecretValue('');
      setSecretName('');
      await load();
      setNote(`Saved the secret ${body.name}.`);
    });
  };
  const removeSecret = (name: string) =>
    run(async () => {
      await call(client.DELETE('/v1/me/repos/secrets/{name}', { params: { path: { name }, query: { repo } } }));
      await load();
    });

  return (
    <div class="card">
      <h2>Repository settings</h2>
      <p>
        Commands and variables for one repository's validation, and secrets only its setup sees (a private registry
        token). Secrets are never shown again.
      </p>
      {!connected && (
        <p class="note" data-testid="repo-settings-disabled">
          Connect a code host first (Code host, above): repository settings and triggers apply to repositories on it,
          and triggers register a webhook with its connection.
        </p>
      )}
      <form class="form" onSubmit={load} aria-label="Choose a repository">
        <fieldset class="bare" disabled={!connected}>
          <label for="repo-url">Repository URL</label>
          <input id="repo-url" type="url" required value={repo} onInput={(e) => setRepo(e.currentTarget.value)} />
          <div class="actions">
            <button type="submit">Load</button>
          </div>
        </fieldset>
      </form>
      <ErrorNote error={error} />
      {note && <p role="status">{note}</p>}
      {(loaded || triggers) && (
        <>
          <form class="form" onSubmit={save} aria-label="Repository settings">
            <label for="repo-setup">Setup command (after the detected install)</label>
            <input id="repo-setup" value={setup} onInput={(e) => setSetup(e.currentTarget.value)} />
            <label for="repo-test">Test command</label>
            <input id="repo-test" value={test} onInput={(e) => setTest(e.currentTarget.value)} />
            <label for="repo-env">Variables, one NAME=value a line (setup and tests)</label>
            <textarea id="repo-env" rows={4} value={envText} onInput={(e) => setEnvText(e.currentTarget.value)} />
            <label for="repo-attempts">Fixer attempts of tasks that name none (the plan’s limit applies)</label>
            <select id="repo-attempts" value={attempts} onChange={(e) => setAttempts(e.currentTarget.value)}>
              <option value="">Default: 1</option>
              {[1, 2, 3, 4, 5].map((n) => (
                <option key={n} value={String(n)}>
                  {n}
                </option>
              ))}
            </select>
            <div class="actions">
              <button type="submit">Save settings</button>
            </div>
          </form>
          <h3>Setup secrets</h3>
          {(loaded?.secrets.length ?? 0) === 0 ? (
            <p>No secrets.</p>
          ) : (
            <ul class="secrets">
              {loaded!.secrets.map((s) => (
                <li key={s.name}>
                  <code>{s.name}</code> · updated {when(s.updated_at)}{' '}
                  <button
                    type="button"
                    class="link"
                    onClick={() => removeSecret(s.name)}
                    aria-label={`Delete the secret ${s.name}`}
                  >
                    Delete
                  </button>
                </li>
              ))}
            </ul>
          )}
          <form class="form" onSubmit={saveSecret} aria-label="Save a setup secret">
            <label for="secret-name">Secret name</label>
            <input id="secret-name" required value={secretName} onInput={(e) => setSecretName(e.currentTarget.value)} />
            <label for="secret-value">Secret value</label>
            <input
              id="secret-value"
              type="password"
              autocomplete="off"
              required
              value={secretValue}
              onInput={(e) => setSecretValue(e.currentTarget.value)}
            />
            <div class="actions">
              <button type="submit">Save secret</button>
            </div>
          </form>
          {triggers && <RepoTriggers key={triggers.key} repo={triggers.repo} initial={triggers.value} say={setNote} />}
        </>
      )}
    </div>
  );
}
