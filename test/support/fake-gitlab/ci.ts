import { type CiJobState, ciJob, ciRunsOn, runState } from '../fake-host/ci.js';
import { type Ctx, type Reply, type Route, ok, repoRoutes } from '../fake-host/rest.js';
import { type RepoState, fullName } from '../fake-host/state.js';

/**
 * GitLab CI on the fake: a run is a pipeline, its jobs the pipeline's jobs (GitLab words: running,
 * success, failed), their traces plain text. The pipeline's web page is /-/pipelines/:id.
 */

const glError = (status: number, words: string): Reply => ({ status, body: { message: `${status} ${words}` } });
const { onRepo: project } = repoRoutes(
  '/projects/([^/]+)',
  (ctx, id) => (/^\d+$/.test(id!) ? ctx.state.repoById(Number(id)) : ctx.state.repoByFullName(id!)),
  () => glError(404, 'Project Not Found'),
);

/** GitLab's status words. */
export const glStatus = (w: CiJobState['state']) => (w === 'failure' ? 'failed' : w);

export const pipelineUrl = (ctx: Ctx, repo: RepoState, id: number) =>
  `${ctx.urls.webUrl}/${fullName(repo)}/-/pipelines/${id}`;

export function jobView(ctx: Ctx, repo: RepoState, j: CiJobState) {
  return {
    ...{ id: j.id, name: j.name, stage: j.stage, status: glStatus(j.state), ref: j.branch, created_at: j.createdAt },
    ...{ web_url: `${ctx.urls.webUrl}/${fullName(repo)}/-/jobs/${j.id}`, pipeline: { id: j.run, sha: j.sha } },
    failure_reason: j.state === 'failure' ? 'script_failure' : null,
  };
}

/** Every job of every pipeline of the repository, its latest per name within a pipeline. */
function pipelines(repo: RepoState) {
  const shas = [...new Set(repo.ci.map((j) => j.sha))];
  return shas.flatMap((sha) => ciRunsOn(repo, sha).map((r) => ({ ...r, sha })));
}

export const ciRoutes: Route[] = [
  // Newest first; `sha` and `ref` filter.
  project('GET', '/pipelines', (ctx, repo) => {
    const [sha, ref] = [ctx.query.get('sha'), ctx.query.get('ref')];
    const found = pipelines(repo)
      .filter((p) => (!sha || p.sha === sha) && (!ref || p.branch === ref))
      .sort((a, b) => b.id - a.id);
    return ok(
      found.map((p) => ({
        ...{ id: p.id, iid: p.id, project_id: repo.id, sha: p.sha, ref: p.branch, source: 'push' },
        ...{ status: glStatus(runState(p.jobs)), web_url: pipelineUrl(ctx, repo, p.id) },
      })),
    );
  }),
  project('GET', '/pipelines/(\\d+)/jobs', (ctx, repo, id = '') => {
    const pipeline = pipelines(repo).find((p) => p.id === Number(id));
    return pipeline ? ok(pipeline.jobs.map((j) => jobView(ctx, repo, j))) : glError(404, 'Not found');
  }),
  project('GET', '/jobs/(\\d+)/trace', (_ctx, repo, id = '') => {
    const j = ciJob(repo, Number(id));
    return j && !j.status
      ? { status: 200, body: j.log, headers: { 'content-type': 'text/plain; charset=utf-8' } }
      : glError(404, 'Not found');
  }),
];
