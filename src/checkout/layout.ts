import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { GitEnv } from './git.js';
import type { CheckoutDeps } from './checkout-deps.js';

/*
 * Where things live under the data directory (config.dataDir), known here only:
 *   mirrors/   one bare mirror per repository (mirrors.ts names the path inside)
 *   work/<id>/ a task's own directory: its checkout (tree/, git/) and the site fixer's site/
 *   git-home/  git's HOME
 */

/** <dataDir>/mirrors: the root of the repositories' mirrors. */
export const mirrorsRootOf = (dataDir: string) => join(dataDir, 'mirrors');

/** <dataDir>/work: one directory per task that has used one. */
export const workRootOf = (dataDir: string) => join(dataDir, 'work');

/** <dataDir>/work/<taskId>: the task's own directory (the caller checks the id can name a directory). */
export const taskWorkDirOf = (dataDir: string, taskId: string) => join(workRootOf(dataDir), taskId);

const gitHomeOf = (dataDir: string) => join(dataDir, 'git-home');

/**
 * git's HOME: an empty directory of ours, so nothing from a user's ~/.gitconfig, ~/.netrc or
 * credential helper takes part (GIT_CONFIG_GLOBAL=/dev/null covers the config files too).
 */
export function gitEnvOf(deps: CheckoutDeps): GitEnv {
  const home = gitHomeOf(deps.dataDir);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  return { home, git: deps.git, spawn: deps.spawn };
}
