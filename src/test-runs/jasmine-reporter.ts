import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { JASMINE_HELPER_PATH } from '../environments/detect.js';

/**
 * jasmine's own reporter prints a dot per spec and names only the failures, so a passing test
 * has no name in its output: neither the validator (which tests pass, which the change fixed)
 * nor the eval's judge (whose ids are full names) could tell it. This helper, loaded with
 * `--helper` (jasmine-npm 2 and 3) or `--require` (4 and 5), adds a reporter beside jasmine's that writes each spec's
 * full name with its mark on a line of its own (`✓ Marked Table cells should pass example 9`),
 * which the tree parser reads (src/test-runs/parse-js.ts). It prints nothing else, so the
 * output a person reads is jasmine's with a list added.
 */
const REPORTER_SOURCE = `// emend's spec list for jasmine (loaded with --helper; see emend's docs/validator.md).
(function () {
  var env = typeof jasmine !== 'undefined' && jasmine.getEnv ? jasmine.getEnv() : undefined;
  if (!env || typeof env.addReporter !== 'function') return;
  var marks = { passed: '\\u2713', failed: '\\u2717', pending: '\\u25cb', excluded: '\\u25cb' };
  env.addReporter({
    specDone: function (result) {
      var mark = marks[result.status];
      if (!mark || typeof result.fullName !== 'string') return;
      // A line of its own: jasmine's dots have no newline after them.
      process.stdout.write('\\n' + mark + ' ' + result.fullName.replace(/\\s+/g, ' ').trim() + '\\n');
    },
  });
})();
`;

/** The file in the tools directory (TREE_TOOLS, bound at SANDBOX_WORKDIR/emend) that detect.ts's flag names. */
const FILE = basename(JASMINE_HELPER_PATH);

/** Whether a command loads the helper (a remembered command keeps it, as it keeps pytest's plugin). */
export const namesJasmineHelper = (command: string): boolean =>
  command.includes(`--helper=${JASMINE_HELPER_PATH}`) || command.includes(`--require=${JASMINE_HELPER_PATH}`);

/** Writes the helper into the run's tools directory (prepared, and read-only to the tests), as the pytest plugin is. */
export async function writeJasmineHelper(toolsDir: string): Promise<void> {
  await writeFile(join(toolsDir, FILE), REPORTER_SOURCE, { flag: 'wx', mode: 0o444 });
}
