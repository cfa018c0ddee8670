import { type CiJobState, type CiRun, ciJob, ciJobsOn, ciRunsOn, runState } from '../fake-host/ci.js';
import { type Ctx, type Reply, type Route, ok, repoRoutes, repoUrls } from '../fake-host/rest.js';
import type { RepoState } from '../fake-host/state.js';

/**
 * Gitea's CI on the fake: commit statuses (Gitea Actions posts one per job, linking the job's
 * page; other services post their own), and the Actions API of Gitea 1.24 and later: workflow
 * runs by head commit, a run's jobs with their steps, a job's log as plain text. Actions'
 * statuses are named `CI / <job> (push)`, as a workflow named CI would make them.
 */

const error = (ctx: Ctx, status: number, message: string): Reply => ({
  status,
  body: { message, url: `${ctx.urls.webUrl}/api/swagger` },
});
const { onRepo } = repoRoutes(
  '/repos/([^/]+)/([^/]+)',
  (ctx, o, r) => ctx.state.repo(o!, r!),
  () => ({ status: 404, body: { message: 'not found' } }),
);

const status = (w: CiJobState['state']) => (w === 'running' ? 'in_progress' : 'completed');
const conclusion = (w: CiJobState['state']) => (w === 'running' ? undefined : w);
/** A run's page and its jobs' (Gitea numbers a run's jobs from 0 on its page). */
const runPage = (ctx: Ctx, repo: RepoState, run: number) => `${repoUrls(ctx, repo).web}/actions/runs/${run}`;
const jobPage = (ctx: Ctx, repo: RepoState, j: CiJobState) => {
  const index = repo.ci.filter((x) => x.run === j.run && !x.status).findIndex((x) => x.id === j.id);
  return `${runPage(ctx, repo, j.run)}/jobs/${index}`;
};

export function jobView(ctx: Ctx, repo: RepoState, j: CiJobState) {
  return {
    ...{ id: j.id, run_id: j.run, name: j.name, head_sha: j.sha, head_branch: j.branch },
    ...{ status: status(j.state), conclusion: conclusion(j.state), html_url: jobPage(ctx, repo, j) },
    ...{
      url: `${repoUrls(ctx, repo).api}/actions/jobs/${j.id}`,
      run_url: `${repoUrls(ctx, repo).api}/actions/runs/${j.run}`,
    },
    steps: j.steps.map((s, i) => ({
      name: s.name,
      number: i + 1,
      status: status(s.state),
      conclusion: conclusion(s.state),
    })),
  };
}

export function runView(
  ctx: Ctx,
  repo: RepoState,
  run: { id: number; sha: string; branch: string; jobs: CiJobState[] },
) {
  const state = runState(run.jobs);
  return {
    ...{ id: run.id, head_sha: run.sha, head_branch: run.branch, display_title: 'CI', path: 'ci.yml@refs/heads/main' },
    ...{ status: status(state), conclusion: conclusion(state), html_url: runPage(ctx, repo, run.id), event: 'push' },
  };
}

/** A commit status as Gitea shows it: an Actions job's (its context and page) or another service's. */
export function statusView(ctx: Ctx, repo: RepoState, j: CiJobState) {
  const state = j.state === 'running' ? 'pending' : j.state;
  return j.status
    ? { id: j.id, context: j.name, state, target_url: `https://ci.example/${j.id}`, description: j.description }
    : { id: j.id, context: `CI / ${j.name} (push)`, state, target_url: jobPage(ctx, repo, j), description: '' };
}

/** The run as the `workflow_run` event shows it (with the pull request it ran for, where one is open). */
export const runOf = (ctx: Ctx, repo: RepoState, run: CiRun) =>
  runView(ctx, repo, { ...run, jobs: run.jobs.filter((j) => !j.status) });

export const ciRoutes: Route[] = [
  onRepo('GET', '/commits/([^/]+)/status', (ctx, repo, ref = '') => {
    const sha = ctx.state.git.resolve(repo.dir, ref);
    if (!sha) return error(ctx, 404, 'not found');
    const jobs = ciJobsOn(repo, sha);
    const state = jobs.length === 0 ? '' : runState(jobs) === 'running' ? 'pending' : runState(jobs);
    return ok({ state, sha, total_count: jobs.length, statuses: jobs.map((j) => statusView(ctx, repo, j)) });
  }),
  onRepo('GET', '/actions/runs', (ctx, repo) => {
    const sha = ctx.query.get('head_sha');
    const shas = sha ? [sha] : [...new Set(repo.ci.map((j) => j.sha))];
    const runs = shas.flatMap((s) => ciRunsOn(repo, s).map((r) => runView(ctx, repo, { ...r, sha: s })));
    return ok({ workflow_runs: runs, total_count: runs.length });
  }),
  onRepo('GET', '/actions/runs/(\\d+)/jobs', (ctx, repo, id = '') => {
    const jobs = repo.ci.filter((j) => j.run === Number(id) && !j.status);
    return ok({ jobs: jobs.map((j) => jobView(ctx, repo, j)), total_count: jobs.length });
  }),
  onRepo('GET', '/actions/jobs/(\\d+)/logs', (ctx, repo, id = '') => {
    const j = ciJob(repo, Number(id));
    return j && !j.status
      ? { status: 200, body: j.log, headers: { 'content-type': 'text/plain; charset=utf-8' } }
      : error(ctx, 404, 'job does not exist');
  }),
];
