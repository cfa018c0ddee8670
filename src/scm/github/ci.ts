import type { Octokit } from '@octokit/rest';
import { type CiJob, ciStateOf } from '../ci.js';

/**
 * A commit's CI on GitHub (and GitHub Enterprise Server): its check runs (GitHub Actions' jobs
 * among them, whose check run id is the job's id) and its commit statuses (what other services
 * post), and an Actions job's log. Called inside the adapter's `call`, which words failures.
 */

const ACTIONS = 'github-actions';

type CheckRun = {
  id: number;
  name: string;
  status: string;
  conclusion: string | null;
  html_url: string | null;
  details_url?: string | null;
  app?: { slug?: string; name?: string } | null;
  output?: { title?: string | null } | null;
};

/** A check run's state: its conclusion once completed, else pending. */
const checkState = (c: CheckRun) => (c.status === 'completed' ? ciStateOf(c.conclusion) : 'pending');

/** The first failed step of an Actions job (GET /repos/{o}/{r}/actions/jobs/{id}), where GitHub says one. */
async function failedStep(octokit: Octokit, owner: string, repo: string, jobId: number): Promise<string | undefined> {
  try {
    const { data } = await octokit.rest.actions.getJobForWorkflowRun({ owner, repo, job_id: jobId });
    return (data.steps ?? []).find((s) => ciStateOf(s.conclusion) === 'failed')?.name;
  } catch {
    // The job's steps are a nicety: its log says the same.
    return undefined;
  }
}

/** Every check run (latest of each name) and commit status (latest of each context) of `sha`. */
export async function gitHubCiJobs(octokit: Octokit, owner: string, repo: string, sha: string): Promise<CiJob[]> {
  const runs = (await octokit.paginate(octokit.rest.checks.listForRef, {
    owner,
    repo,
    ref: sha,
    filter: 'latest',
    per_page: 100,
  })) as CheckRun[];
  const jobs: CiJob[] = [];
  for (const c of runs) {
    const state = checkState(c);
    const actions = c.app?.slug === ACTIONS;
    const step = actions && state === 'failed' ? await failedStep(octokit, owner, repo, c.id) : undefined;
    jobs.push({
      id: String(c.id),
      name: c.name,
      state,
      url: c.html_url ?? c.details_url ?? null,
      ...(step ? { step } : {}),
      hasLog: actions,
      ...(c.output?.title ? { summary: c.output.title } : {}),
      source: actions ? 'GitHub Actions' : (c.app?.name ?? 'a check'),
    });
  }
  // The combined status has the latest status of each context.
  const { data } = await octokit.rest.repos.getCombinedStatusForRef({ owner, repo, ref: sha, per_page: 100 });
  for (const s of data.statuses ?? [])
    jobs.push({
      id: s.context,
      name: s.context,
      state: ciStateOf(s.state),
      url: s.target_url ?? null,
      hasLog: false,
      ...(s.description ? { summary: s.description } : {}),
      source: 'a commit status',
    });
  return jobs;
}

/** An Actions job's log (GitHub redirects to a short-lived address; fetch follows); none for another app's check. */
export async function gitHubCiLog(octokit: Octokit, owner: string, repo: string, job: CiJob): Promise<string | null> {
  if (!job.hasLog || !/^\d+$/.test(job.id)) return null;
  try {
    const { data } = await octokit.rest.actions.downloadJobLogsForWorkflowRun({ owner, repo, job_id: Number(job.id) });
    return typeof data === 'string' ? data : data instanceof ArrayBuffer ? Buffer.from(data).toString('utf8') : null;
  } catch (err) {
    // Expired (410) or gone (404): no log to read.
    const status = (err as { status?: number }).status;
    if (status === 404 || status === 410) return null;
    throw err;
  }
}
