import type { Deps } from '../../deps.js';
import { chosenHost, hostFor } from '../../workspaces/scm-connection.js';
import { repoCredential } from '../../workspaces/repo-credential.js';
import { type CodeHost, type PullSource, ScmError } from '../../scm/code-host.js';
import { type ScmHost, gitUrlOf } from '../../scm/hosts.js';
import { parseRepoUrl } from '../../scm/urls.js';
import { gitEnvOf } from '../../checkout/layout.js';
import { GitError, identityEnv, runGit } from '../../checkout/git.js';
import type { FixStep, StepHelpers } from '../step.js';
import { branchName } from '../../tasks/branch-name.js';
import { pullBody, pullTitle } from './pr-body.js';

const FORK_READY_TRIES = 5;

/** Commits the checkout's change on a new branch as `identity` (the service's, or the app's bot); returns the commit. */
async function commitChange(
  deps: Deps,
  helpers: StepHelpers,
  branch: string,
  title: string,
  identity: { name: string; email: string },
): Promise<string> {
  const checkout = await helpers.checkout();
  const checkoutDeps = { dataDir: deps.config.dataDir, log: deps.log, spawn: helpers.spawn };
  const git = gitEnvOf(checkoutDeps);
  const call = {
    gitDir: checkout.gitDir,
    workTree: checkout.dir,
    cwd: checkout.dir,
    signal: helpers.signal,
    env: identityEnv(identity),
  };
  await runGit(git, { ...call, args: ['checkout', '--quiet', '-B', branch] });
  await runGit(git, { ...call, args: ['add', '--all'] });
  await runGit(git, { ...call, args: ['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-m', title] });
  return (await runGit(git, { ...call, args: ['rev-parse', 'HEAD'] })).stdout.trim();
}

/** Where to push and as whom: the host's git address and the token with the host's user name. */
interface PushTarget {
  url: string;
  token: string;
  user: string;
}

async function push(deps: Deps, helpers: StepHelpers, remote: PushTarget, branch: string, force = true): Promise<void> {
  const checkout = await helpers.checkout();
  const git = gitEnvOf({ dataDir: deps.config.dataDir, log: deps.log, spawn: helpers.spawn });
  await runGit(git, {
    gitDir: checkout.gitDir,
    workTree: checkout.dir,
    cwd: checkout.dir,
    signal: helpers.signal,
    remote,
    // The branch is this task's own (emend/<id>-…): a run resumed after its worker died pushes
    // a new commit of the same change over the one the dead run left there (found by the soak).
    // A follow-up pushes onto its pull request's branch without force: never over a person's commits.
    args: [
      'push',
      '--quiet',
      '--no-verify',
      ...(force ? ['--force'] : []),
      '--',
      remote.url,
      `HEAD:refs/heads/${branch}`,
    ],
  });
}

/** git's refusal in the host's words (the `remote:` lines), without the token. */
function pushFailure(err: unknown, where: string): Error {
  if (!(err instanceof GitError)) return err as Error;
  const remote = err.stderr
    .split('\n')
    .filter((l) => /^remote: |error: |fatal: /.test(l))
    .map((l) => l.replace(/^remote: /, '').trim())
    .filter(Boolean)
    .slice(0, 4)
    .join(' ');
  return new Error(`the code host refused the push to ${where}: ${remote || err.message}`);
}

/** Pushes to the caller's fork, made (or brought up to date) first; a new fork can take a moment to accept pushes. */
async function pushToFork(
  deps: Deps,
  helpers: StepHelpers,
  at: { host: ScmHost; client: CodeHost; token: string },
  repo: { owner: string; name: string; base: string },
  branch: string,
) {
  const fork = await at.client.fork(repo.owner, repo.name);
  await at.client
    .syncFork(fork.owner, fork.name, repo.base)
    .catch((err) => helpers.log('fork sync failed; pushing anyway', { problem: (err as Error).message }));
  // The configured web address, never the API's clone_url: the token goes to the operator's host only.
  const remote = { url: gitUrlOf(at.host, fork.owner, fork.name), token: at.token, user: at.host.kind.gitUser };
  for (let attempt = 1; ; attempt++) {
    try {
      await push(deps, helpers, remote, branch);
      return fork;
    } catch (err) {
      if (attempt >= FORK_READY_TRIES || helpers.signal.aborted) throw pushFailure(err, `${fork.owner}/${fork.name}`);
      await new Promise((r) => setTimeout(r, 500 * attempt));
    }
  }
}

/**
 * The pr step: commits the fixer's change on emend/<id>-<slug>, pushes it to the repository
 * (or to the caller's fork when they cannot push there), and opens a pull request against the
 * task's base branch: a draft when validation did not pass (a normal one that says so where
 * the repository allows no drafts). Every refusal fails the task with the host's message.
 */
export function prStep(): FixStep<'pr'> {
  return async ({ task, outputs }, helpers) => {
    const deps = helpers.deps;
    if (!task.repoUrl) throw new Error('this task has no repository to open a pull request on');
    const ref = parseRepoUrl(task.repoUrl, deps.config);
    const { owner, name } = ref;
    const host = chosenHost(deps, ref.host);
    const credential = await repoCredential(deps, task.workspaceId, host, { owner, name });
    const token = credential.token;
    // As the app, commits are its bot's (GitHub shows `<slug>[bot]`), as a group's bot the bot's; as a
    // person's connection, the service's identity.
    const identity = 'bot' in credential ? credential.bot : deps.config.commitIdentity;
    if (!token)
      throw new Error(
        `no account on ${host.id} is connected to push and open the ${host.kind.pullNoun}; connect one ` +
          '(POST /v1/me/scm) and continue',
      );
    const gh = hostFor(deps, host, token);
    const repo = await gh.repo(owner, name);
    if (!repo) throw new Error(`${owner}/${name} is no longer visible to the connected account`);

    if (task.trigger?.thread === 'pull' && task.parentId) {
      // A follow-up on emend's pull request: its checkout is that pull request's branch (the task's
      // base), and the change goes onto it as a new commit; the pull request is the same one.
      const branch = task.baseBranch;
      const commit = await commitChange(deps, helpers, branch, pullTitle(task, outputs.planner), identity);
      try {
        await push(deps, helpers, { url: gitUrlOf(host, owner, name), token, user: host.kind.gitUser }, branch, false);
      } catch (err) {
        if (err instanceof GitError && /non-fast-forward|fetch first|rejected/.test(err.stderr))
          throw new Error(
            `the branch ${branch} moved while emend worked (someone pushed to it); emend did not push over those ` +
              'commits: ask again to build on them',
          );
        throw pushFailure(err, `${owner}/${name}`);
      }
      const pull = await gh.openPullFrom(owner, name, branch);
      if (!pull) throw new Error(`pushed to ${branch}, but its ${host.kind.pullNoun} is no longer open`);
      helpers.log('follow-up pushed onto the pull request', { number: pull.number, commit });
      return {
        output: {
          pr_url: pull.url,
          number: pull.number,
          branch,
          head: branch,
          base: task.baseBranch,
          commit,
          draft: pull.draft,
          drafts_disallowed: false,
          fork: null,
          reused: true,
        },
        patch: { prUrl: pull.url },
      };
    }

    const branch = branchName(task);
    const title = pullTitle(task, outputs.planner);
    const commit = await commitChange(deps, helpers, branch, title, identity);
    let head = branch;
    let from: PullSource | undefined;
    let fork: string | null = null;
    // An installation token carries the app's write access; GitHub does not show it as the caller's `permissions`.
    if (repo.canPush || credential.via === 'app') {
      try {
        await push(deps, helpers, { url: gitUrlOf(host, owner, name), token, user: host.kind.gitUser }, branch);
      } catch (err) {
        throw pushFailure(err, `${owner}/${name}`);
      }
    } else {
      const made = await pushToFork(
        deps,
        helpers,
        { host, client: gh, token },
        { owner, name, base: task.baseBranch },
        branch,
      );
      head = `${made.owner}:${branch}`;
      from = { owner: made.owner, name: made.name };
      fork = made.fullName;
    }

    const passed = outputs.validator?.passed === true;
    const open = (draft: boolean, note?: string) =>
      gh.openPull({
        owner,
        name,
        branch,
        from,
        base: task.baseBranch,
        title,
        body: pullBody(task, outputs, note),
        draft,
      });
    let pull: Awaited<ReturnType<typeof open>>;
    let draftsDisallowed = false;
    try {
      pull = await open(
        !passed,
        passed ? undefined : 'Validation did not pass: this pull request is a draft until a person has looked at it.',
      );
    } catch (err) {
      // A run resumed after its worker died (found by the soak): the dead run had already opened
      // this branch's pull request, which now holds the pushed commit; it is the task's.
      const earlier =
        err instanceof ScmError && err.refusal === 'pull_exists'
          ? await gh.openPullFrom(owner, name, branch, from)
          : undefined;
      if (earlier) {
        helpers.log('pull request already opened by an earlier run of this task', { number: earlier.number });
        return {
          output: {
            pr_url: earlier.url,
            number: earlier.number,
            branch,
            head,
            base: task.baseBranch,
            commit,
            draft: earlier.draft,
            drafts_disallowed: false,
            fork,
            reused: true,
          },
          patch: { prUrl: earlier.url },
        };
      }
      if (passed || !(err instanceof ScmError) || err.refusal !== 'drafts_disallowed') throw err;
      draftsDisallowed = true;
      pull = await open(
        false,
        'Validation did not pass, and this repository does not allow draft pull requests: review with care before merging.',
      );
    }
    helpers.log('pull request opened', { number: pull.number, draft: pull.draft, fork: !!fork });
    return {
      output: {
        pr_url: pull.url,
        number: pull.number,
        branch,
        head,
        base: task.baseBranch,
        commit,
        draft: pull.draft,
        drafts_disallowed: draftsDisallowed,
        fork,
      },
      patch: { prUrl: pull.url },
    };
  };
}
