import { useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { Profile } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';

const PROVIDER_NAMES = { openai: 'OpenAI', anthropic: 'Anthropic', google: 'Google' } as const;

/**
 * Whether a task here can call a model: the server's key (managed) or one of the workspace's own
 * (BYOK). Without either, creating a task is refused (412 model_not_configured).
 */
function ServerKey({ profile }: { profile: Profile }) {
  const managed = profile.server.managed_providers;
  const own = profile.api_keys.length > 0;
  if (managed.length > 0)
    return (
      <p class="hint" data-testid="server-model-key">
        This server has a model key ({managed.map((p) => PROVIDER_NAMES[p]).join(', ')}): tasks use it unless you turn
        on your own keys.
        {profile.use_byok && !own && ' You turned on your own keys but have none saved: add one under Provider keys.'}
      </p>
    );
  return (
    <p class={own && profile.use_byok ? 'hint' : 'warning'} data-testid="server-model-key">
      This server has no model key of its own.{' '}
      {own && profile.use_byok
        ? 'Your tasks use your provider keys.'
        : 'To run tasks, save a key under Provider keys below and turn on “Use my own provider keys”, or ask the operator to set one on the server (OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY).'}
    </p>
  );
}

/** The BYOK switch: the account's own provider keys (the provider bills it) or the service's, with credits. */
export function ModelProvider({ profile, reload }: { profile: Profile; reload: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const toggle = async (enabled: boolean) => {
    setError(null);
    try {
      await call(client.POST('/v1/me/byok', { body: { enabled } }));
      reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card">
      <h2>Model provider</h2>
      <label class="inline">
        <input type="checkbox" checked={profile.use_byok} onChange={(e) => toggle(e.currentTarget.checked)} /> Use my
        own provider keys (BYOK): the provider bills me, no credits are used
      </label>
      <ServerKey profile={profile} />
      <ErrorNote error={error} />
    </div>
  );
}
