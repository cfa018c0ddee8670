import { isoSeconds } from './bare.js';
import type { Pull, RepoState, State } from './state.js';

/**
 * CI on the fake hosts: jobs reported on a repository's commits, each a job of the host's own CI
 * (GitHub Actions, GitLab CI, Gitea Actions: with steps and a log) or a commit status another
 * service posted (`status`: no log). Jobs of one report share a run: a check suite on GitHub, a
 * pipeline on GitLab, a workflow run on Gitea. Each host shows them its way (its rest.ts) and
 * delivers the report in its own events (its events.ts, `HostActions.ciReported`).
 */

export type CiWord = 'running' | 'success' | 'failure';

export interface CiJobState {
  id: number;
  run: number;
  sha: string;
  branch: string;
  name: string;
  state: CiWord;
  status: boolean;
  steps: { name: string; state: CiWord }[];
  log: string;
  /** GitLab's stage (default `test`). */
  stage: string;
  /** A status's description. */
  description: string;
  createdAt: string;
}

/** A job as a test reports it: failed steps default to one named after the job; a status has neither steps nor a log. */
export interface CiJobSpec {
  name: string;
  state: CiWord;
  steps?: { name: string; state: CiWord }[];
  log?: string;
  status?: boolean;
  stage?: string;
  description?: string;
}

/** One report: its run's id, the commit and branch, its jobs, and the open pull requests whose head it is. */
export interface CiRun {
  id: number;
  sha: string;
  branch: string;
  jobs: CiJobState[];
  pulls: Pull[];
}

let ids = 8_000_001;

/** The report stored on the repository (the branch's head unless `sha` says). */
export function reportCi(
  state: State,
  repo: RepoState,
  opts: { branch: string; sha?: string; jobs: CiJobSpec[] },
): CiRun {
  const sha = opts.sha ?? state.git.branchHead(repo.dir, opts.branch);
  if (!sha) throw new Error(`fake host: ${repo.owner}/${repo.name} has no branch ${opts.branch}`);
  const run = ids++;
  const createdAt = isoSeconds(new Date());
  const jobs = opts.jobs.map(
    (j): CiJobState => ({
      id: ids++,
      run,
      sha,
      branch: opts.branch,
      name: j.name,
      state: j.state,
      status: j.status ?? false,
      steps: j.status ? [] : (j.steps ?? [{ name: j.name, state: j.state }]),
      log: j.status ? '' : (j.log ?? ''),
      stage: j.stage ?? 'test',
      description: j.description ?? '',
      createdAt,
    }),
  );
  repo.ci.push(...jobs);
  const pulls = repo.pulls.filter(
    (p) =>
      p.state === 'open' &&
      p.head.owner.toLowerCase() === repo.owner.toLowerCase() &&
      p.head.ref === opts.branch &&
      state.syncHead(repo, p) === sha,
  );
  return { id: run, sha, branch: opts.branch, jobs, pulls };
}

/** The latest job of each name on `sha` (a re-run replaces the one before). */
export function ciJobsOn(repo: RepoState, sha: string): CiJobState[] {
  const latest = new Map<string, CiJobState>();
  for (const j of repo.ci) if (j.sha === sha) latest.set(`${j.status}:${j.name}`, j);
  return [...latest.values()];
}

/** The runs on `sha`, newest first, each with its latest jobs. */
export function ciRunsOn(repo: RepoState, sha: string): { id: number; branch: string; jobs: CiJobState[] }[] {
  const runs = new Map<number, CiJobState[]>();
  for (const j of ciJobsOn(repo, sha).filter((j) => !j.status)) runs.set(j.run, [...(runs.get(j.run) ?? []), j]);
  return [...runs].sort(([a], [b]) => b - a).map(([id, jobs]) => ({ id, branch: jobs[0]!.branch, jobs }));
}

/** A run's state from its jobs: running while any is, failed when any failed, else success. */
export function runState(jobs: { state: CiWord }[]): CiWord {
  if (jobs.some((j) => j.state === 'running')) return 'running';
  return jobs.some((j) => j.state === 'failure') ? 'failure' : 'success';
}

export const ciJob = (repo: RepoState, id: number) => repo.ci.find((j) => j.id === id);
