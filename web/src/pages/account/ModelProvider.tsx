import { useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { Profile } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';

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
      <ErrorNote error={error} />
    </div>
  );
}
