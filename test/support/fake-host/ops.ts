import { type Ctx, type Reply, type Route, type RouteOptions, ok, type repoRoutes } from './rest.js';
import { ACCESS, type Comment, type Hook, type Pull, type PullFields, type ReactionState } from './state.js';
import type { RepoState, Thread } from './state.js';

/**
 * The operations the hosts' routes share, on the State: what each decides (who may, what
 * changes) is the same on every host; a refusal comes back as a kind the host words itself.
 */

export const visibleForks = (ctx: Ctx, repo: RepoState): RepoState[] =>
  ctx.state.forksOf(repo).filter((r) => ctx.state.canSee(r, ctx.login));

/** Pulls in `state` ('all': every one) as the host words a pull's state. */
export const pullsIn = (repo: RepoState, state: string, word = (p: Pull): string => p.state): Pull[] =>
  repo.pulls.filter((p) => state === 'all' || word(p) === state);

export type PullRefusal = { refused: 'noHead' | 'noBase' | 'noCommits' } | { exists: Pull };

/** A new pull: its fields, its head (`from`'s branch `ref`), the refusals that apply (see openPull). */
export type PullAsk = PullFields & { from: RepoState; ref: string; sameBase?: boolean; needCommits?: boolean };

/**
 * Opens the caller's pull request on `target` from `from`'s branch `ref`. Refused when either
 * branch is missing, when an open one from the same head (`sameBase`: and to the same base)
 * exists, and (`needCommits`) when the head brings nothing the base lacks; both default true.
 */
export function openPull(ctx: Ctx, target: RepoState, ask: PullAsk): Pull | PullRefusal {
  const { from: head, ref, sameBase = true, needCommits = true, ...fields } = ask;
  const git = ctx.state.git;
  if (!git.branchHead(head.dir, ref)) return { refused: 'noHead' };
  const baseSha = git.branchHead(target.dir, fields.base);
  if (!baseSha) return { refused: 'noBase' };
  const same = (p: Pull) => p.head.ref === ref && ctx.state.headRepo(p) === head;
  const exists = target.pulls.find((p) => p.state === 'open' && same(p) && (!sameBase || p.base === fields.base));
  if (exists) return { exists };
  if (needCommits) {
    const headSha = git.fetchRef(target.dir, head.dir, `refs/heads/${ref}`);
    if (!headSha || git.isAncestor(target.dir, headSha, baseSha)) return { refused: 'noCommits' };
  }
  const user = ctx.login ?? target.owner;
  return ctx.state.addPull(target, { ...fields, user, head: { owner: head.owner, repo: head.name, ref } });
}

export type Synced = 'none' | 'fast-forward' | 'notFork' | 'noBranch' | 'noUpstream' | 'diverged';

/** Fast-forwards the fork's `branch` to its parent's (a diverged branch is refused: no test needs a merge). */
export function syncBranch(ctx: Ctx, repo: RepoState, branch: string): Synced {
  const parent = repo.parent ? ctx.state.repoByFullName(repo.parent) : undefined;
  const git = ctx.state.git;
  const mine = parent && git.branchHead(repo.dir, branch);
  if (!parent || !mine) return parent ? 'noBranch' : 'notFork';
  const upstream = git.fetchRef(repo.dir, parent.dir, `refs/heads/${branch}`);
  if (!upstream) return 'noUpstream';
  if (upstream === mine || git.isAncestor(repo.dir, upstream, mine)) return 'none';
  if (!git.isAncestor(repo.dir, mine, upstream)) return 'diverged';
  git.setRef(repo.dir, branch, upstream);
  return 'fast-forward';
}

/** A host's hook routes: its write checks, its refusal, its missing hook (default: the refusal), creating and showing one. */
export type HookRoutes = {
  writes: RouteOptions;
  refused(): Reply;
  gone?(): Reply;
  create(ctx: Ctx, repo: RepoState): Reply;
  view(ctx: Ctx, repo: RepoState, hook: Hook): object;
  /** Changing a hook in place (GitHub and Gitea PATCH, GitLab PUT): what the body sets, 200 with the hook shown. */
  edit: { method: 'PATCH' | 'PUT'; apply(ctx: Ctx, hook: Hook): Reply | undefined };
};

/**
 * POST, GET, PATCH (GitLab: PUT) and DELETE …/hooks[/ID] of a repository (`onRepo`, the host's): only a caller at
 * Maintainer or above (GitLab's Maintainers, GitHub's and Gitea's admins) manages them, anyone
 * else who sees the repository gets the host's refusal; a deleted hook is 204.
 */
export function hookRoutes(onRepo: ReturnType<typeof repoRoutes>['onRepo'], host: HookRoutes): Route[] {
  const gated =
    (handler: (ctx: Ctx, repo: RepoState, id: string) => Reply) =>
    (ctx: Ctx, repo: RepoState, id = '') =>
      ctx.state.accessLevel(repo, ctx.login) >= ACCESS.maintainer ? handler(ctx, repo, id) : host.refused();
  const list = gated((ctx, repo) => ok(repo.hooks.map((h) => host.view(ctx, repo, h))));
  const remove = gated((_, repo, id) => {
    const at = repo.hooks.findIndex((h) => String(h.id) === id);
    if (at < 0) return (host.gone ?? host.refused)();
    repo.hooks.splice(at, 1);
    return { status: 204 };
  });
  const edit = gated((ctx, repo, id) => {
    const hook = repo.hooks.find((h) => String(h.id) === id);
    if (!hook) return (host.gone ?? host.refused)();
    return host.edit.apply(ctx, hook) ?? ok(host.view(ctx, repo, hook));
  });
  const { writes } = host;
  return [
    ...[onRepo('POST', '/hooks', writes, gated(host.create)), onRepo('GET', '/hooks', { doc: writes.doc }, list)],
    onRepo(host.edit.method, '/hooks/(\\d+)', writes, edit),
    onRepo('DELETE', '/hooks/(\\d+)', writes, remove),
  ];
}

/** A comment the caller edits: none of that id (or not where `fits` looks), or not theirs; else it, changed. */
export function editOwnComment(ctx: Ctx, repo: RepoState, id: string, fits: (c: Comment) => boolean) {
  const comment = /^\d+$/.test(id) ? ctx.state.comment(repo, Number(id)) : undefined;
  if (!comment || !fits(comment)) return 'missing';
  // The hosts let a repository's writers edit anyone's comment; the fake keeps to the author, what emend needs.
  if (comment.user.toLowerCase() !== ctx.login?.toLowerCase()) return 'notAuthor';
  comment.body = typeof ctx.body.body === 'string' ? ctx.body.body : comment.body;
  comment.updatedAt = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return comment;
}

/** The caller's reaction `content` on a thread or a comment that must exist; `created` false for one it had. */
export function reactOn(ctx: Ctx, repo: RepoState, on: Thread | { comment: number }, content: string) {
  const there = 'comment' in on ? !!ctx.state.comment(repo, on.comment) : ctx.state.hasThread(repo, on);
  return there ? ctx.state.react(repo, on, ctx.login!, content) : undefined;
}

export const reactionsOn = (repo: RepoState, on: ReactionState['on']): ReactionState[] =>
  repo.reactions.filter((r) =>
    'comment' in on
      ? 'comment' in r.on && r.on.comment === on.comment
      : !('comment' in r.on) && r.on.kind === on.kind && r.on.number === on.number,
  );

/** The line comments of a pull (of one review when `review` is given), oldest first. */
export const lineCommentsOf = (repo: RepoState, pull: number, review?: number): Comment[] =>
  repo.comments.filter(
    (c) =>
      c.line &&
      c.thread.kind === 'pull' &&
      c.thread.number === pull &&
      (review === undefined || c.line.review === review),
  );
