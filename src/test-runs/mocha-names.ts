import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The line above the names block. */
export const MOCHA_NAMES_HEADER = 'emend: mocha tests by name';

/**
 * mocha's dot, progress and min reporters print no name for a passing test, and a script may
 * choose one where the validator cannot add a flag (eslint's `node Makefile.js test`). This
 * module, preloaded into every node of the test phase (`NODE_OPTIONS=--require …`; node 8 and
 * later read it, older ones ignore it), waits for mocha's main module to be loaded and listens to
 * each run; when the run ends (after the reporter's own summary) it prints a block headed
 * MOCHA_NAMES_HEADER with a line per test, its mark and its name as the spec reporter gives it,
 * groups joined by ` › ` (`✓ math › add › adds two numbers`), spaces collapsed: the spec
 * reporter's own ids are the same, so nothing counts twice. A file, not stdout: a line would land
 * inside a reporter's row of dots, and a script may cut mocha's output or exit before a pipe drains.
 * It does nothing in a process that never loads mocha. Read by parseMochaNames (parse-js.ts).
 */
const PRELOAD_SOURCE = `// emend's test names for mocha (preloaded with NODE_OPTIONS; see emend's docs/validator.md).
'use strict';
(function () {
  var Module = require('module');
  var load = Module._load;
  var done = false;
  function name(test) {
    var names = [];
    for (var at = test; at; at = at.parent) if (at.title) names.unshift(String(at.title).replace(/\\s+/g, ' ').trim());
    return names.join(' \\u203a ');
  }
  // Appended to a file of the run's own (EMEND_TEST_NAMES, names-file.ts), not written to stdout: a script may
  // capture mocha's output with a bounded buffer (shelljs's exec keeps 200 KB) or exit the moment
  // the run ends, and a pipe write left in the stream's buffer would be lost.
  function writeAll(text) {
    var file = process.env.EMEND_TEST_NAMES;
    if (!file) return;
    try { require('fs').appendFileSync(file, text); } catch (e) { /* not writable: no names */ }
  }
  Module._load = function () {
    var exported = load.apply(this, arguments);
    if (!done && typeof exported === 'function' && exported.Runner && exported.Suite && exported.reporters) {
      done = true;
      var run = exported.Runner.prototype.run;
      exported.Runner.prototype.run = function () {
        if (!this.__emendNames) {
          this.__emendNames = true;
          var lines = [];
          this.on('pass', function (test) { lines.push('\\u2713 ' + name(test)); });
          this.on('fail', function (test) { lines.push('\\u2717 ' + name(test)); });
          this.on('pending', function (test) { lines.push('\\u25cb ' + name(test)); });
          this.on('end', function () { writeAll('${MOCHA_NAMES_HEADER}\\n' + lines.join('\\n') + '\\n\\n'); });
        }
        return run.apply(this, arguments);
      };
    }
    return exported;
  };
})();
`;

/** The preload's file in the run's tools directory. */
export const MOCHA_PRELOAD = 'emend-mocha-names.cjs';

/** Writes the preload into the run's tools directory (prepared, and read-only to the tests). */
export async function writeMochaNames(toolsDir: string): Promise<void> {
  await writeFile(join(toolsDir, MOCHA_PRELOAD), PRELOAD_SOURCE, { flag: 'wx', mode: 0o444 });
}
