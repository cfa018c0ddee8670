import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../api/client';
import type { paths } from '../api/schema';
import type { Profile, TaskType } from '../api/types';
import { ErrorNote } from '../components/ErrorNote';
import { navigate } from '../router';

type Approval = NonNullable<paths['/v1/tasks']['post']['requestBody']['content']['application/json']['approval_mode']>;
const APPROVALS: readonly Approval[] = ['auto', 'manual'];
/** '' sends no fixer: the workspace's default (Account → Defaults for new tasks) decides. */
type FixerChoice = '' | 'pipeline' | 'agent';

export function NewTaskPage({ profile }: { profile: Profile }) {
  const [type, setType] = useState<TaskType>('fix');
  const [repo, setRepo] = useState('');
  const [branch, setBranch] = useState('main');
  const [prompt, setPrompt] = useState('');
  const [approval, setApproval] = useState<Approval>(profile.approval_mode === 'manual' ? 'manual' : 'auto');
  const [fixer, setFixer] = useState<FixerChoice>('');
  /** 0 sends no number: the repository's default (its settings), else 1. */
  const [attempts, setAttempts] = useState(0);
  // The plan's limit of attempts, so the form offers no more than it allows (the server refuses more).
  const [maxAttempts, setMaxAttempts] = useState(1);
  useEffect(() => {
    call(client.GET('/v1/tasks/limits')).then(
      (l) => setMaxAttempts(l.limits.maxAttempts),
      () => setMaxAttempts(1),
    );
  }, []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const body =
        type === 'fix'
          ? {
              task_type: 'fix' as const,
              prompt,
              repo_url: repo.trim(),
              base_branch: branch.trim() || 'main',
              approval_mode: approval,
              ...(fixer ? { fixer } : {}),
              ...(attempts > 0 ? { attempts } : {}),
            }
          : { task_type: 'scaffold' as const, prompt, approval_mode: approval };
      const task = await call(client.POST('/v1/tasks', { body }));
      navigate(`/app/tasks/${task.id}`);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  const input = (set: (v: string) => void) => (e: Event) => set((e.target as HTMLInputElement).value);

  return (
    <section>
      <h1 tabIndex={-1}>New task</h1>
      <ErrorNote error={error} />
      <form onSubmit={submit} class="card form" aria-label="New task">
        <fieldset>
          <legend>Kind of task</legend>
          <label class="inline">
            <input type="radio" name="task_type" value="fix" checked={type === 'fix'} onChange={() => setType('fix')} />{' '}
            Fix: change a repository and open a pull request
          </label>
          <label class="inline">
            <input
              type="radio"
              name="task_type"
              value="scaffold"
              checked={type === 'scaffold'}
              onChange={() => setType('scaffold')}
            />{' '}
            Scaffold: build a marketing site from a brief
          </label>
        </fieldset>
        {type === 'fix' && (
          <>
            <label for="repo_url">Repository URL</label>
            <input
              id="repo_url"
              type="url"
              required
              placeholder="https://github.com/owner/repository"
              value={repo}
              onInput={input(setRepo)}
            />
            <label for="base_branch">Base branch</label>
            <input id="base_branch" type="text" required value={branch} onInput={input(setBranch)} />
            <label for="fixer">Fixer</label>
            <select
              id="fixer"
              value={fixer}
              onChange={(e) => {
                const v = e.currentTarget.value;
                setFixer(v === 'pipeline' || v === 'agent' ? v : '');
              }}
            >
              <option value="">Workspace default ({profile.fixer ?? 'the server’s'})</option>
              <option value="pipeline">Pipeline: plan, locate, edit, validate</option>
              <option value="agent">Agent: works in the repository with tools, then validates</option>
            </select>
            <label for="attempts">Attempts</label>
            <select
              id="attempts"
              value={String(attempts)}
              aria-describedby="attempts-hint"
              onChange={(e) => setAttempts(Number(e.currentTarget.value) || 0)}
            >
              <option value="0">Repository default (one unless its settings say more)</option>
              {Array.from({ length: maxAttempts }, (_, i) => i + 1).map((n) => (
                <option key={n} value={String(n)}>
                  {n === 1 ? '1 attempt' : `${n} attempts, the validator keeps the best`}
                </option>
              ))}
            </select>
            <p id="attempts-hint" class="hint">
              Each attempt is a fixer run of its own, validated; every attempt counts toward the cost. Your plan allows{' '}
              {maxAttempts}.
            </p>
          </>
        )}
        <label for="prompt">{type === 'fix' ? 'What should change?' : 'Brief for the site'}</label>
        <textarea
          id="prompt"
          required
          minLength={3}
          maxLength={2000}
          rows={5}
          value={prompt}
          onInput={input(setPrompt)}
        />
        <label for="approval_mode">Approval</label>
        <select
          id="approval_mode"
          value={approval}
          onChange={(e) => setApproval(APPROVALS.find((a) => a === e.currentTarget.value) ?? 'auto')}
        >
          <option value="auto">Automatic: run every step without stopping</option>
          <option value="manual">Manual: wait for my approval of the plan and of the diff</option>
        </select>
        <button type="submit" disabled={busy}>
          Start task
        </button>
      </form>
    </section>
  );
}
