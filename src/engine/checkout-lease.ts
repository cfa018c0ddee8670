import type { Deps } from '../deps.js';
import { repoCredential } from '../workspaces/repo-credential.js';
import { hostOfUrl } from '../scm/hosts.js';
import type { Task } from '../tasks/service.js';
import { type TaskCheckout, prepareCheckout } from '../checkout/checkout.js';
import { gitEnvOf } from '../checkout/layout.js';
import { type Spawn, runGit } from '../checkout/git.js';
import { applyDiff } from '../checkout/diff.js';

/** What a run knows about its checkout that another worker must reproduce. */
export interface CheckoutState {
  baseCommit?: string;
  /** The fixer's latest diff, re-applied when a later run re-creates the checkout. */
  diff?: string;
}

/** The clone URL of a task's repository (repo_url is stored normalised, without .git). */
export const cloneUrlOf = (task: Pick<Task, 'repoUrl'>) => `${task.repoUrl}.git`;

/**
 * The run's checkout, made the first time a step asks for it and disposed when the run
 * ends (finished, at a gate, killed or handed over). A run that resumes on another worker
 * (or after a gate) checks out the same base commit and re-applies the fixer's diff, so
 * the validator and the pr step see the change whichever machine they run on.
 */
export class CheckoutLease {
  private checkout: Promise<TaskCheckout> | undefined;

  constructor(
    private readonly deps: Deps,
    private readonly task: Task,
    private readonly state: () => CheckoutState,
    private readonly spawn: Spawn,
    private readonly signal: AbortSignal,
  ) {}

  get(): Promise<TaskCheckout> {
    this.checkout ??= this.open();
    return this.checkout;
  }

  private async open(): Promise<TaskCheckout> {
    if (!this.task.repoUrl) throw new Error('this task has no repository to check out');
    const checkoutDeps = { dataDir: this.deps.config.dataDir, log: this.deps.log, spawn: this.spawn };
    // A connected account's token reads its private repositories; public ones need none.
    // (A repository on no configured host is a local one of development and tests: no token.)
    const on = hostOfUrl(this.deps.config, this.task.repoUrl);
    const path = on?.host.kind.repoPath(on.path.split('/'));
    const token =
      on && typeof path === 'object'
        ? (await repoCredential(this.deps, this.task.workspaceId, on.host, path)).token
        : undefined;
    const checkout = await prepareCheckout(checkoutDeps, {
      taskId: this.task.id,
      repoUrl: cloneUrlOf(this.task),
      baseBranch: this.task.baseBranch,
      token,
      tokenUser: on?.host.kind.gitUser,
      signal: this.signal,
    });
    const { baseCommit, diff } = this.state();
    const git = gitEnvOf(checkoutDeps);
    const call = { gitDir: checkout.gitDir, workTree: checkout.dir, cwd: checkout.dir, signal: this.signal };
    if (baseCommit && baseCommit !== checkout.baseCommit) {
      // The branch moved since the run began: stay on the commit the plan and diff were made for.
      await runGit(git, { ...call, args: ['reset', '--hard', '--quiet', baseCommit] });
      checkout.baseCommit = baseCommit;
    }
    if (diff) await applyDiff(checkoutDeps, checkout, diff, this.signal);
    return checkout;
  }

  async dispose(): Promise<void> {
    const pending = this.checkout;
    this.checkout = undefined;
    if (pending) await (await pending.catch(() => undefined))?.dispose();
  }
}
