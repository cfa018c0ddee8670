import type { InstanceResult } from './run.js';

/**
 * Why an instance was not resolved, in classes a reader can count: the report groups by them,
 * so "12 setup failed (refused connection)" says what to work on where a list of logs does not.
 */
export type ReasonClass =
  | 'checkout failed'
  | 'edits not applied'
  | 'test patch did not apply'
  | 'no runner found'
  | 'toolchain missing'
  | 'browser missing'
  | 'setup failed'
  | 'pipeline failed'
  | 'tests did not pass';

export interface Reason {
  class: ReasonClass;
  /** For `setup failed`: what in the setup's own words failed (a refused connection, a native build…). */
  why?: string;
}

/** The setup failure's kind, read from the words the package managers and the egress proxy print. */
const SETUP_WHY: Array<[RegExp, string]> = [
  [/gyp ERR!|node-gyp rebuild|native module/i, 'native module build'],
  [/emend refused|refused connection|refused: /i, 'refused connection'],
  [/Invalid Version/, 'lockfile version string'],
  [/git dependency|ls-remote|git clone|permission denied \(publickey\)/i, 'git dependency'],
  [/ELIFECYCLE|install script|postinstall|lifecycle script|Command failed/i, "a package's install script"],
  [/ERR_INVALID_THIS|Unsupported engine|EBADENGINE|requires? (a )?node/i, 'package manager and node'],
  [/timed out/i, 'timed out'],
];

/** The class of an instance's outcome (undefined when it was resolved). */
export function reasonOf(r: InstanceResult): Reason | undefined {
  if (r.resolved) return undefined;
  const failure = r.setup.failure;
  if (!failure) return r.edits?.failures.length ? { class: 'edits not applied' } : { class: 'tests did not pass' };
  switch (failure.stage) {
    case 'checkout':
      return { class: 'checkout failed' };
    case 'pipeline':
      return { class: 'pipeline failed' };
    case 'test_patch':
      return { class: 'test patch did not apply' };
    case 'runner':
      return { class: 'no runner found' };
    case 'setup': {
      if (failure.missing)
        return { class: /chromium|browser/i.test(failure.reason) ? 'browser missing' : 'toolchain missing' };
      const why = SETUP_WHY.find(([pattern]) => pattern.test(failure.reason))?.[1] ?? 'other';
      return { class: 'setup failed', why };
    }
  }
}

/** The reason's words for a table: `setup failed (refused connection)`. */
export const reasonText = (reason: Reason) => (reason.why ? `${reason.class} (${reason.why})` : reason.class);
