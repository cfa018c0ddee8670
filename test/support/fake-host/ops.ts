import type { Ctx } from './rest.js';
import type { Pull, PullFields, RepoState } from './state.js';

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
