import { z } from 'zod';
import { ciStateOf } from '../ci.js';
import type { ReadEvent } from '../host-events.js';
import { quoted, readFields } from '../payload-fields.js';

/**
 * GitLab's pipeline deliveries (`Pipeline Hook`, docs.gitlab.com "Pipeline events";
 * lib/gitlab/data_builder/pipeline.rb) in emend's words: a `ci` event for the pipeline's commit,
 * its status, and the merge request it ran for (a merge request pipeline names it; a branch
 * pipeline names only its branch).
 */

const Pipeline = z.object({
  object_attributes: z.object({
    id: z.number().int(),
    sha: z.string(),
    ref: z.string().nullish(),
    status: z.string(),
    url: z.string().nullish(),
  }),
  merge_request: z.object({ iid: z.number().int(), source_branch: z.string().nullish() }).nullish(),
  project: z.object({ path_with_namespace: z.string(), web_url: z.string().nullish() }),
  user: z.object({ username: z.string(), id: z.number().int() }),
});

export function pipelineHook(payload: unknown): ReadEvent {
  const read = readFields(Pipeline, payload);
  if ('ignored' in read) return read;
  const p = read.fields;
  const full = p.project.path_with_namespace;
  const at = full.lastIndexOf('/');
  if (at <= 0 || at === full.length - 1)
    return { ignored: `the payload's project.path_with_namespace ${quoted(full)} is not GROUP/…/PROJECT` };
  const a = p.object_attributes;
  const mr = p.merge_request;
  // A merge request pipeline's ref is refs/merge-requests/N/head: its branch is the merge request's source.
  const branch = mr?.source_branch ?? (a.ref && !a.ref.startsWith('refs/') ? a.ref : undefined);
  const url = a.url ?? (p.project.web_url ? `${p.project.web_url}/-/pipelines/${a.id}` : undefined);
  return {
    kind: 'ci',
    repo: { owner: full.slice(0, at), name: full.slice(at + 1) },
    actor: { login: p.user.username, id: p.user.id },
    ci: {
      sha: a.sha,
      state: ciStateOf(a.status),
      name: `pipeline ${a.id}`,
      pulls: mr ? [mr.iid] : [],
      ...(branch ? { branch } : {}),
      ...(url ? { url } : {}),
    },
  };
}
