import type { Logger } from 'pino';
import type { Spawn } from './git.js';

/** What the checkout code needs; the engine builds it from Deps and the step's helpers. */
export interface CheckoutDeps {
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
