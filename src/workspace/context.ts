import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { GitEnv, Spawn } from './git.js';

/** What the workspace code needs; the engine builds it from Deps and the step's helpers. */
export interface WorkspaceDeps {
  /** config.dataDir: mirrors/, work/ and git-home/ live under it. */
  dataDir: string;
  log: Logger;
  /** The step's tracked spawn, so a kill ends git and its helpers. */
  spawn?: Spawn;
  /** The git executable (default `git` on PATH). */
  git?: string;
  /** How long a task waits for another task's fetch of the same repository (default 10 min). */
  lockTimeoutMs?: number;
  /** Limit for one network fetch (default 15 min). */
  fetchTimeoutMs?: number;
}

export type WorkspaceErrorReason =
  | 'bad_request'
  | 'auth'
  | 'repo_not_found'
  | 'missing_branch'
  | 'timeout'
  | 'aborted'
  | 'git';

/** What went wrong while preparing a workspace, in words a task's log can show; never holds a token. */
export class WorkspaceError extends Error {
  constructor(
    readonly reason: WorkspaceErrorReason,
    message: string,
  ) {
    super(message);
    this.name = 'WorkspaceError';
  }
}

/**
 * git's HOME: an empty directory of ours, so nothing from a user's ~/.gitconfig, ~/.netrc or
 * credential helper takes part (GIT_CONFIG_GLOBAL=/dev/null covers the config files too).
 */
export function gitEnvOf(deps: WorkspaceDeps): GitEnv {
  const home = join(deps.dataDir, 'git-home');
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return { home, git: deps.git, spawn: deps.spawn };
}
