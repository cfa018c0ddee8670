import { type CiJobState, type CiRun, ciJob, ciJobsOn, runState } from '../fake-host/ci.js';
import { type Ctx, type Reply, type Route, ok, repoRoutes, repoUrls } from '../fake-host/rest.js';
import type { RepoState } from '../fake-host/state.js';

/**
 * GitHub's CI on the fake: check runs (GitHub Actions' jobs: a check run's id is its job's),
 * commit statuses, an Actions job with its steps, and its log (a redirect to a short-lived
 * address, as GitHub answers, which serves the text to anyone holding it).
 */

const DOCS = 'https://docs.github.com/rest';
const notFound = (doc: string): Reply => ({
  status: 404,
  body: { message: 'Not Found', documentation_url: `${DOCS}/${doc}`, status: '404' },
});
const find = (ctx: Ctx, owner = '', name = '') => ctx.state.repo(owner, name);
const { onRepo } = repoRoutes('/repos/([^/]+)/([^/]+)', find, (_, doc) => notFound(doc));

const status = (w: CiJobState['state']) => (w === 'running' ? 'in_progress' : 'completed');
const conclusion = (w: CiJobState['state']) => (w === 'running' ? null : w);
const jobPage = (ctx: Ctx, repo: RepoState, j: CiJobState) =>
  `${repoUrls(ctx, repo).web}/actions/runs/${j.run}/job/${j.id}`;
const ACTIONS = { id: 15368, slug: 'github-actions', name: 'GitHub Actions' };

export function checkRunView(ctx: Ctx, repo: RepoState, j: CiJobState, pulls: object[] = []) {
  return {
    ...{ id: j.id, name: j.name, head_sha: j.sha, status: status(j.state), conclusion: conclusion(j.state) },
    ...{ html_url: jobPage(ctx, repo, j), details_url: jobPage(ctx, repo, j), started_at: j.createdAt },
    ...{ app: ACTIONS, check_suite: { id: j.run, head_branch: j.branch }, output: { title: null, summary: null } },
    pull_requests: pulls,
  };
}

/** A status as the REST API and the `status` event show it: GitHub says pending, success, failure. */
export function statusView(j: CiJobState) {
  return {
    ...{ id: j.id, context: j.name, description: j.description || null, target_url: `https://ci.example/${j.id}` },
    ...{ state: j.state === 'running' ? 'pending' : j.state, created_at: j.createdAt, updated_at: j.createdAt },
  };
}

/** The pull requests of a run as check suites and runs name them. */
export const pullRefs = (run: CiRun) =>
  run.pulls.map((p) => ({ number: p.number, head: { ref: p.head.ref, sha: run.sha }, base: { ref: p.base } }));

/** The check suite of a run (its check runs' jobs), as the `check_suite` event shows it. */
export function checkSuiteView(run: CiRun, jobs: CiJobState[]) {
  const state = runState(jobs);
  return {
    ...{ id: run.id, head_branch: run.branch, head_sha: run.sha, status: status(state), conclusion: conclusion(state) },
    ...{ app: ACTIONS, pull_requests: pullRefs(run) },
  };
}

const shaOf = (ctx: Ctx, repo: RepoState, ref: string) => ctx.state.git.resolve(repo.dir, ref);

export const ciRoutes: Route[] = [
  onRepo('GET', '/commits/([^/]+)/check-runs', { doc: 'checks/runs' }, (ctx, repo, ref = '') => {
    const sha = shaOf(ctx, repo, ref);
    const runs = sha ? ciJobsOn(repo, sha).filter((j) => !j.status) : [];
    return ok({ total_count: runs.length, check_runs: runs.map((j) => checkRunView(ctx, repo, j)) });
  }),
  onRepo('GET', '/commits/([^/]+)/status', { doc: 'commits/statuses' }, (ctx, repo, ref = '') => {
    const sha = shaOf(ctx, repo, ref);
    if (!sha) return notFound('commits/statuses');
    const statuses = ciJobsOn(repo, sha).filter((j) => j.status);
    const state = statuses.length === 0 ? 'pending' : runState(statuses) === 'running' ? 'pending' : runState(statuses);
    return ok({ state, sha, total_count: statuses.length, statuses: statuses.map(statusView) });
  }),
  onRepo('GET', '/actions/jobs/(\\d+)', { doc: 'actions/workflow-jobs' }, (ctx, repo, id = '') => {
    const j = ciJob(repo, Number(id));
    if (!j || j.status) return notFound('actions/workflow-jobs');
    return ok({
      ...{ id: j.id, run_id: j.run, name: j.name, head_sha: j.sha, head_branch: j.branch },
      ...{ status: status(j.state), conclusion: conclusion(j.state), html_url: jobPage(ctx, repo, j) },
      steps: j.steps.map((s, i) => ({
        name: s.name,
        status: status(s.state),
        conclusion: conclusion(s.state),
        number: i + 1,
      })),
    });
  }),
  // GitHub answers 302 to a short-lived address of the log's storage.
  onRepo('GET', '/actions/jobs/(\\d+)/logs', { doc: 'actions/workflow-jobs' }, (ctx, repo, id = '') => {
    const j = ciJob(repo, Number(id));
    if (!j || j.status) return notFound('actions/workflow-jobs');
    return { status: 302, body: '', headers: { location: `${ctx.urls.apiUrl}/_fake-logs/${repo.id}/${j.id}` } };
  }),
  [
    'GET',
    /^\/_fake-logs\/(\d+)\/(\d+)$/,
    (ctx, repoId = '', id = '') => {
      const repo = ctx.state.repoById(Number(repoId));
      const j = repo && ciJob(repo, Number(id));
      return j
        ? { status: 200, body: j.log, headers: { 'content-type': 'text/plain; charset=utf-8' } }
        : { status: 404, body: 'BlobNotFound' };
    },
  ],
];
