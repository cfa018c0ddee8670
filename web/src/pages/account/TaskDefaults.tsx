import { useState } from 'preact/hooks';
import { call, client } from '../../api/client';
import type { Profile } from '../../api/types';
import { ErrorNote } from '../../components/ErrorNote';

type Fixer = 'pipeline' | 'agent';

/** The workspace's defaults for new tasks (POST /v1/me/settings): the approval mode and the fixer. */
export function TaskDefaults({ profile, reload }: { profile: Profile; reload: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState('');
  const save = async (body: { approval_mode?: 'auto' | 'manual'; fixer?: Fixer | null }) => {
    setError(null);
    setSaved('');
    try {
      await call(client.POST('/v1/me/settings', { body }));
      setSaved('Saved.');
      reload();
    } catch (err) {
      setError(err);
    }
  };
  return (
    <div class="card">
      <h2>Defaults for new tasks</h2>
      <form class="form" aria-label="Defaults for new tasks" onSubmit={(e) => e.preventDefault()}>
        <label for="default-approval">Approval</label>
        <select
          id="default-approval"
          value={profile.approval_mode}
          onChange={(e) => save({ approval_mode: e.currentTarget.value === 'manual' ? 'manual' : 'auto' })}
        >
          <option value="auto">Automatic: run every step without stopping</option>
          <option value="manual">Manual: wait for approval of the plan and of the diff</option>
        </select>
        <label for="default-fixer">Fixer of fix tasks</label>
        <select
          id="default-fixer"
          value={profile.fixer ?? ''}
          onChange={(e) => {
            const v = e.currentTarget.value;
            return save({ fixer: v === 'pipeline' || v === 'agent' ? v : null });
          }}
        >
          <option value="">The server’s default</option>
          <option value="pipeline">Pipeline: plan, locate, edit, validate</option>
          <option value="agent">Agent: works in the repository with tools, then validates</option>
        </select>
      </form>
      {saved && <p role="status">{saved}</p>}
      <ErrorNote error={error} />
    </div>
  );
}
