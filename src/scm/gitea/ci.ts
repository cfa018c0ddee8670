import { type CiJob, ciStateOf } from '../ci.js';
import { type Call, repoPathOf } from './api.js';

/**
 * A commit's CI on Gitea and Forgejo: its commit statuses (the latest of each context: what Gitea
 * Actions and other services post) and, where the host has the Actions API (Gitea 1.24 and later),
 * the jobs of its workflow runs with their steps and logs. A status Gitea Actions posted for a job
 * is that job, read once.
 */

interface StatusView {
  context: string;
  state: string;
  target_url?: string | null;
  description?: string | null;
}

interface RunView {
  id: number;
  head_sha?: string;
}

interface JobView {
  id: number;
  name: string;
  status: string;
  conclusion?: string | null;
  html_url?: string | null;
  steps?: { name: string; conclusion?: string | null }[] | null;
}

/** A job's state: its conclusion once completed, else pending. */
const jobState = (j: JobView) => (j.status === 'completed' ? ciStateOf(j.conclusion) : 'pending');

/** The Actions jobs of the runs on `sha`; none when the host has no Actions API (404). */
async function actionsJobs(call: Call, owner: string, name: string, sha: string): Promise<JobView[]> {
  const base = `${repoPathOf(owner, name)}/actions`;
  const what = `reading the workflow runs of ${owner}/${name}@${sha.slice(0, 7)}`;
  const runs = await call<{ workflow_runs?: RunView[] }>(what, 'GET', `${base}/runs`, {
    query: { head_sha: sha, limit: 20 },
    accept: [404],
  });
  if (runs.status === 404) return [];
  const jobs: JobView[] = [];
  for (const run of (runs.data.workflow_runs ?? []).filter((r) => !r.head_sha || r.head_sha === sha)) {
    const { data } = await call<{ jobs?: JobView[] }>(what, 'GET', `${base}/runs/${run.id}/jobs`, { accept: [404] });
    jobs.push(...(data?.jobs ?? []));
  }
  return jobs;
}

export async function giteaCiJobs(call: Call, owner: string, name: string, sha: string): Promise<CiJob[]> {
  const what = `reading the statuses of ${owner}/${name}@${sha.slice(0, 7)}`;
  const path = `${repoPathOf(owner, name)}/commits/${encodeURIComponent(sha)}/status`;
  const { data } = await call<{ statuses?: StatusView[] | null }>(what, 'GET', path, { accept: [404] });
  const jobs: CiJob[] = (await actionsJobs(call, owner, name, sha)).map((j) => {
    const state = jobState(j);
    const step =
      state === 'failed' ? (j.steps ?? []).find((s) => ciStateOf(s.conclusion) === 'failed')?.name : undefined;
    return {
      id: String(j.id),
      name: j.name,
      state,
      url: j.html_url ?? null,
      ...(step ? { step } : {}),
      hasLog: true,
      source: 'Gitea Actions',
    };
  });
  const pages = new Set(jobs.map((j) => j.url).filter(Boolean));
  for (const s of data?.statuses ?? []) {
    // Gitea Actions' own status for a job links to the job's page: the job is listed already.
    if (s.target_url && pages.has(s.target_url)) continue;
    jobs.push({
      id: s.context,
      name: s.context,
      state: ciStateOf(s.state),
      url: s.target_url || null,
      hasLog: false,
      ...(s.description ? { summary: s.description } : {}),
      source: 'a commit status',
    });
  }
  return jobs;
}

/** An Actions job's log (plain text); null for a status, or where the host keeps none (404). */
export async function giteaCiLog(call: Call, owner: string, name: string, job: CiJob): Promise<string | null> {
  if (!job.hasLog || !/^\d+$/.test(job.id)) return null;
  const path = `${repoPathOf(owner, name)}/actions/jobs/${job.id}/logs`;
  const got = await call<string>(`reading the log of ${job.name} on ${owner}/${name}`, 'GET', path, {
    accept: [404],
    raw: true,
  });
  return got.status === 404 ? null : got.data;
}
