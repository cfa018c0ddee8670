import { z } from 'zod';
import { type CiEvent, type CiState, ciStateOf } from './ci.js';
import { Envelope, repoOf } from './github-style-payloads.js';
import type { ReadEvent } from './host-events.js';
import { readFields } from './payload-fields.js';

/**
 * The CI deliveries GitHub sends and Gitea (Forgejo) copies, in emend's words: GitHub's check
 * suites and check runs (docs.github.com "check_suite", "check_run"), the commit status both send
 * ("status"), and the Actions workflow runs and jobs Gitea sends ("workflow_run", "workflow_job",
 * Gitea's modules/structs/hook.go, GitHub's shapes). Each is a `ci` event: the commit, its state,
 * the pull requests the payload names. Only the fields emend needs are checked.
 */

/** A pull request as a check suite, check run or workflow names it. */
const PullRef = z.object({ number: z.number().int() });

const CheckSuite = Envelope.extend({
  action: z.string(),
  check_suite: z.object({
    id: z.number().int(),
    head_sha: z.string(),
    head_branch: z.string().nullish(),
    status: z.string().nullish(),
    conclusion: z.string().nullish(),
    // Only the pull requests whose head is in this repository (GitHub leaves forks' out).
    pull_requests: z.array(PullRef).nullish(),
    app: z.object({ name: z.string().nullish() }).nullish(),
  }),
});

const CheckRun = Envelope.extend({
  action: z.string(),
  check_run: z.object({
    id: z.number().int(),
    name: z.string(),
    head_sha: z.string(),
    status: z.string().nullish(),
    conclusion: z.string().nullish(),
    html_url: z.string().nullish(),
    pull_requests: z.array(PullRef).nullish(),
    check_suite: z.object({ head_branch: z.string().nullish() }).nullish(),
  }),
});

const Status = Envelope.extend({
  sha: z.string(),
  state: z.string(),
  context: z.string(),
  target_url: z.string().nullish(),
  // GitHub names the branches whose head the commit is; Gitea does not (yet).
  branches: z.array(z.object({ name: z.string() })).nullish(),
});

const Workflow = z.object({
  id: z.number().int(),
  head_sha: z.string(),
  head_branch: z.string().nullish(),
  status: z.string().nullish(),
  conclusion: z.string().nullish(),
  html_url: z.string().nullish(),
});
const WorkflowRun = Envelope.extend({
  action: z.string().nullish(),
  workflow_run: Workflow.extend({ display_title: z.string().nullish(), name: z.string().nullish() }),
  pull_request: PullRef.nullish(),
});
const WorkflowJob = Envelope.extend({
  action: z.string().nullish(),
  workflow_job: Workflow.extend({ name: z.string() }),
  pull_request: PullRef.nullish(),
});

/** A check's or run's state: its conclusion once completed, else still pending. */
const finished = (status: string | null | undefined, conclusion: string | null | undefined): CiState =>
  (status ?? 'completed') === 'completed' && conclusion ? ciStateOf(conclusion) : 'pending';

function ciEvent(p: z.infer<typeof Envelope>, ci: CiEvent): ReadEvent {
  return { kind: 'ci', repo: repoOf(p.repository), actor: { login: p.sender.login, id: p.sender.id }, ci };
}

const branchOf = (b: string | null | undefined) => (b ? { branch: b } : {});

export function checkSuite(payload: unknown): ReadEvent {
  const read = readFields(CheckSuite, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const s = p.check_suite;
  return ciEvent(p, {
    sha: s.head_sha,
    state: finished(s.status, s.conclusion),
    name: `check suite ${s.id}${s.app?.name ? ` (${s.app.name})` : ''}`,
    pulls: (s.pull_requests ?? []).map((x) => x.number),
    ...branchOf(s.head_branch),
  });
}

export function checkRun(payload: unknown): ReadEvent {
  const read = readFields(CheckRun, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const c = p.check_run;
  return ciEvent(p, {
    sha: c.head_sha,
    state: finished(c.status, c.conclusion),
    name: c.name,
    pulls: (c.pull_requests ?? []).map((x) => x.number),
    ...branchOf(c.check_suite?.head_branch),
    ...(c.html_url ? { url: c.html_url } : {}),
  });
}

export function commitStatus(payload: unknown): ReadEvent {
  const read = readFields(Status, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const [branch] = p.branches ?? [];
  return ciEvent(p, {
    sha: p.sha,
    state: ciStateOf(p.state),
    name: p.context,
    pulls: [],
    ...branchOf(branch?.name),
    ...(p.target_url ? { url: p.target_url } : {}),
  });
}

export function workflowRun(payload: unknown): ReadEvent {
  const read = readFields(WorkflowRun, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const r = p.workflow_run;
  return ciEvent(p, {
    sha: r.head_sha,
    state: finished(r.status, r.conclusion),
    name: r.name ?? r.display_title ?? `workflow run ${r.id}`,
    pulls: p.pull_request ? [p.pull_request.number] : [],
    ...branchOf(r.head_branch),
    ...(r.html_url ? { url: r.html_url } : {}),
  });
}

export function workflowJob(payload: unknown): ReadEvent {
  const read = readFields(WorkflowJob, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const j = p.workflow_job;
  return ciEvent(p, {
    sha: j.head_sha,
    state: finished(j.status, j.conclusion),
    name: j.name,
    pulls: p.pull_request ? [p.pull_request.number] : [],
    ...branchOf(j.head_branch),
    ...(j.html_url ? { url: j.html_url } : {}),
  });
}
