import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfinedDir } from '../checkout/confined-fs.js';
import { type RunTree, TREE_HOME } from '../environments/copies.js';
import { SANDBOX_WORKDIR } from '../sandbox/bwrap-args.js';
import { TREE_TOOLS } from './pytest-progress.js';

/**
 * The run's names file: where the preloads that name tests for runners whose reporters do not
 * (mocha-names.ts, karma-hooks.ts) append their blocks, each under its own header. A file of the
 * run's own in the tree's HOME (writable in the sandbox), not stdout: a script may cut a
 * runner's output or exit before a pipe drains, and a line would land inside a row of dots.
 */
const NAMES_FILE = '.emend-test-names';

/** The names of a big suite (eslint's 28,000 tests are about 2 MB), not without end. */
const MAX_NAMES_BYTES = 16 * 1024 * 1024;

/**
 * The test phase's environment with the preloads (files of the run's tools directory) first in
 * NODE_OPTIONS, then what the repository's settings gave, and the names file's path.
 */
export function withNamePreloads(env: Record<string, string>, preloads: string[]): Record<string, string> {
  // `--require path`, not `--require=path`: node 8 refuses the second form in NODE_OPTIONS (exit 9).
  const required = preloads.map((file) => `--require ${SANDBOX_WORKDIR}/${TREE_TOOLS}/${file}`).join(' ');
  return {
    ...env,
    NODE_OPTIONS: env.NODE_OPTIONS ? `${required} ${env.NODE_OPTIONS}` : required,
    EMEND_TEST_NAMES: `${SANDBOX_WORKDIR}/${TREE_HOME}/${NAMES_FILE}`,
  };
}

/** Removes a names file an earlier run (or the repository's code) left; rm does not follow links. */
export async function clearNamesFile(tree: RunTree): Promise<void> {
  await rm(join(tree.workdir, TREE_HOME, NAMES_FILE), { force: true });
}

/**
 * What the run's preloads wrote, read through the confined file module (a link out of the tree,
 * a FIFO or a file past the cap reads as none: the repository's code could have put anything there).
 */
export function readNamesFile(tree: RunTree): string {
  try {
    return new ConfinedDir(join(tree.workdir, TREE_HOME)).readText(NAMES_FILE, { maxBytes: MAX_NAMES_BYTES }) ?? '';
  } catch {
    return '';
  }
}
