import type { Gitlab } from '@gitbeaker/rest';
import { type CiJob, ciStateOf } from '../ci.js';

/**
 * A commit's CI on GitLab: the jobs of its latest pipeline (retried jobs left out, as GitLab lists
 * them) and a job's trace. Called inside the adapter's `call`, which words failures.
 */

type Api = InstanceType<typeof Gitlab>;

interface PipelineView {
  id: number;
  sha: string;
}

interface JobView {
  id: number;
  name: string;
  stage?: string;
  status: string;
  web_url?: string;
  failure_reason?: string | null;
}

/** The jobs of the commit's latest pipeline (GitLab lists pipelines newest first); none without a pipeline. */
export async function gitLabCiJobs(api: Api, project: string, sha: string): Promise<CiJob[]> {
  const pipelines = (await api.Pipelines.all(project, { sha, perPage: 20, maxPages: 1 })) as unknown as PipelineView[];
  const latest = pipelines.find((p) => p.sha === sha) ?? pipelines[0];
  if (!latest) return [];
  const jobs = (await api.Jobs.all(project, {
    pipelineId: latest.id,
    perPage: 100,
    maxPages: 5,
  })) as unknown as JobView[];
  return jobs.map((j) => ({
    id: String(j.id),
    name: j.name,
    state: ciStateOf(j.status),
    url: j.web_url ?? null,
    ...(j.stage ? { step: j.stage } : {}),
    hasLog: true,
    ...(j.failure_reason ? { summary: j.failure_reason.replace(/_/g, ' ') } : {}),
    source: 'GitLab CI',
  }));
}

/** A job's trace (plain text). */
export async function gitLabCiLog(api: Api, project: string, job: CiJob): Promise<string | null> {
  if (!job.hasLog || !/^\d+$/.test(job.id)) return null;
  const log = (await api.Jobs.showLog(project, Number(job.id))) as unknown;
  return typeof log === 'string' ? log : null;
}
