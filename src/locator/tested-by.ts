import { stemOf } from './paths.js';
import { isTestOrSupportFile } from '../text/test-paths.js';

/*
 * A source file and its test file: `lib/features/grid-snapping/behavior/LayoutConnectionBehavior.js` and
 * `test/spec/features/grid-snapping/behavior/LayoutConnectionBehaviorSpec.js`, `requests/adapters.py` and
 * `tests/test_adapters.py`. A test says in words what its module does (`it('should not serialize
 * waypoints')`), where a report of a behaviour is written in words too, and the module in code.
 */

/** A test file's name less what makes it a test's: `test_x`, `x_test`, `x.test`, `x.spec`, `xSpec`, `xTest`. */
function testedStem(path: string): string | undefined {
  const name = path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '');
  const stem = name
    .replace(/^test_/, '')
    .replace(/(?:[._-](?:test|spec)s?|(?<=[a-z0-9])(?:Spec|Tests?))$/, '')
    .toLowerCase();
  return stem && stem !== name.toLowerCase() ? stem : undefined;
}

/** The directories a path is in, as a set of names. */
const dirNames = (path: string) => new Set(path.split('/').slice(0, -1));

/**
 * Each test file (by index into `paths`) with the source file it tests: the non-test file of the
 * same name (less the test's marks) that shares the most directory names with it; none where two
 * share as many (`index.js`, `utils.py` in every package).
 */
export function testedFiles(paths: readonly string[]): Map<number, number> {
  const sources = new Map<string, number[]>();
  paths.forEach((p, i) => {
    if (isTestOrSupportFile(p)) return;
    const stem = stemOf(p).toLowerCase();
    const same = sources.get(stem);
    if (same) same.push(i);
    else sources.set(stem, [i]);
  });
  const out = new Map<number, number>();
  paths.forEach((p, t) => {
    if (!isTestOrSupportFile(p)) return;
    const stem = testedStem(p);
    const candidates = stem === undefined ? undefined : sources.get(stem);
    if (!candidates) return;
    const dirs = dirNames(p);
    const shared = candidates.map((s) => [...dirNames(paths[s]!)].filter((d) => dirs.has(d)).length);
    const best = Math.max(...shared);
    const at = shared.filter((n) => n === best);
    if (at.length === 1) out.set(t, candidates[shared.indexOf(best)]!);
  });
  return out;
}
