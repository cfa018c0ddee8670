import { useEffect, useState } from 'preact/hooks';
import { call, client } from '../api/client';
import type { TaskSummary } from '../api/types';
import { ErrorNote } from '../components/ErrorNote';
import { StatusBadge, money, when } from '../components/Status';
import { onLinkClick } from '../router';

/** The workspace's tasks; `acts`: the role may start one (a viewer only reads). */
export function TasksPage({ acts }: { acts: boolean }) {
  const [tasks, setTasks] = useState<TaskSummary[] | null>(null);
  const [error, setError] = useState<unknown>(null);

  useEffect(() => {
    call(client.GET('/v1/tasks')).then(setTasks, setError);
  }, []);

  return (
    <section>
      <div class="title-row">
        <h1 tabIndex={-1}>Tasks</h1>
        {acts && (
          <a class="button" href="/app/new" onClick={onLinkClick}>
            New task
          </a>
        )}
      </div>
      <ErrorNote error={error} />
      {tasks && tasks.length === 0 && (
        <p data-testid="no-tasks">
          No tasks yet.{' '}
          {acts
            ? 'Start one with New task: a repository URL and what should change (connect its code host on the Account page first).'
            : 'Your role here reads tasks; a member starts them.'}
        </p>
      )}
      {tasks && tasks.length > 0 && (
        <table class="tasks">
          <caption class="sr-only">Your last 100 tasks, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">Status</th>
              <th scope="col">Cost</th>
              <th scope="col">Result</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((t) => (
              <tr key={t.id} data-task={t.id}>
                <td>
                  <a href={`/app/tasks/${t.id}`} onClick={onLinkClick}>
                    {t.prompt.length > 90 ? `${t.prompt.slice(0, 90)}…` : t.prompt}
                  </a>
                  <div class="sub">
                    {t.task_type === 'scaffold' ? 'site' : (t.repo_url ?? '')} · {t.mode}
                  </div>
                </td>
                <td>
                  <StatusBadge status={t.status} />
                </td>
                <td>{money(t.cost_usd)}</td>
                <td>
                  {t.pr_url && (
                    <a href={t.pr_url} rel="noopener noreferrer" target="_blank">
                      Pull request
                    </a>
                  )}
                  {t.deployed_url && (
                    <a href={t.deployed_url} rel="noopener noreferrer" target="_blank">
                      Live site
                    </a>
                  )}
                </td>
                <td>{when(t.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
