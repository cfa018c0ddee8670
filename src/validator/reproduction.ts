import { createHash } from 'node:crypto';
import { cp, lstat, mkdir, readFile, readlink, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Reproduction } from '../step-contract/fix.js';
import type { RunOutcome } from '../test-runs/outcome.js';
import { type Repo, changedFiles, linkOnTheWay } from '../environments/copies.js';
import type { FailureDetail } from '../test-runs/parser-types.js';
import { isTestFile, isTestOrSupportFile } from '../text/test-paths.js';
import { testFileOf } from './test-files.js';

/** What decided `passed`: a reproduction test, or (the change has no test file) no new failures alone. */
export type VerdictRule = Reproduction['rule'];

/** The change's test files, and the files they need, that go into the baseline copy. */
export interface ChangeTests {
  /** Test files and test-only files (helpers, fixtures, conftest.py) the change adds or modifies. */
  copied: string[];
  /** Of those, the files a runner collects as tests. */
  tests: string[];
  /** Their paths and contents, hashed: the key a kept baseline must match; undefined when none. */
  digest?: string;
}

export const NO_TEST_FILE =
  'no reproduction test: the change adds or modifies no test file, so the verdict is no new failures alone';

export async function changeTests(checkout: Repo, commit: string): Promise<ChangeTests> {
  const copied = (await changedFiles(checkout, commit)).filter(isTestOrSupportFile);
  if (copied.length === 0) return { copied, tests: [] };
  const hash = createHash('sha256');
  for (const path of copied) {
    const full = join(checkout.dir, path);
    // A link is hashed as its target's name: it is copied as a link, never followed out of the checkout.
    const stat = await lstat(full);
    hash.update(`${path}\0`).update(stat.isSymbolicLink() ? `-> ${await readlink(full)}` : await readFile(full));
    hash.update('\0');
  }
  return { copied, tests: copied.filter(isTestFile), digest: hash.digest('hex') };
}

/**
 * Puts the change's test files into the baseline copy, so they run on the base commit's code.
 * The base commit's tree is the repository's: a directory on the way that is a link there (the
 * change made it a real one) would lead the copy out of the tree, so such a file is left out,
 * and a file that is a link there is replaced, never written through. Returns what was left out.
 */
export async function addTestsToBaseline(
  checkoutDir: string,
  files: string[],
  baselineRepo: string,
): Promise<string[]> {
  const leftOut: string[] = [];
  for (const path of files) {
    if (await linkOnTheWay(baselineRepo, path)) {
      leftOut.push(path);
      continue;
    }
    const dest = join(baselineRepo, path);
    await mkdir(dirname(dest), { recursive: true });
    await rm(dest, { force: true, recursive: true });
    await cp(join(checkoutDir, path), dest, { verbatimSymlinks: true });
  }
  return leftOut;
}

/** The failing tests of a run that belong to the change's test files. */
export function failuresIn(testFiles: string[], failures: string[], details: Map<string, FailureDetail>): string[] {
  if (testFiles.length === 0) return [];
  return failures.filter((id) => !id.startsWith('(') && testFileOf(id, testFiles, details.get(id)) !== undefined);
}

/**
 * The reproduction verdict: the change's tests failed on the base commit and pass with the
 * change, and none of them fails with it. A test id that is a file (a module that did not
 * import on the base) counts as passing when the change's run passes tests of that file.
 */
export function judgeReproduction(
  testFiles: string[],
  failedOnBase: string[],
  change: RunOutcome,
  untouched: readonly string[] = [],
): Reproduction {
  if (testFiles.length === 0)
    return {
      rule: 'no-new-failures',
      test_files: [],
      failed_on_base: [],
      now_passing: [],
      still_failing: [],
      note: NO_TEST_FILE,
    };
  // A test failing before and after in lines the change left alone is only the file's old failure.
  const own = failuresIn(testFiles, change.failures, change.details);
  const leftAlone = own.filter((id) => untouched.includes(id) && failedOnBase.includes(id));
  const stillFailing = own.filter((id) => !leftAlone.includes(id));
  const passesFile = (file: string) =>
    [...change.tests].some(([id, s]) => s === 'passed' && testFileOf(id, [file]) === file) &&
    !stillFailing.some((id) => testFileOf(id, [file], change.details.get(id)) === file);
  const nowPassing = failedOnBase.filter(
    (id) =>
      !change.failures.includes(id) &&
      (change.tests.get(id) === 'passed' || (testFiles.includes(id) && passesFile(id))),
  );
  return {
    rule: 'reproduction',
    test_files: testFiles,
    failed_on_base: failedOnBase,
    now_passing: nowPassing,
    still_failing: stillFailing,
    ...(leftAlone.length > 0 ? { untouched_failing: leftAlone } : {}),
    note: reproductionNote(testFiles, failedOnBase, nowPassing, stillFailing, leftAlone),
  };
}

export const reproduced = (r: Reproduction): boolean => r.now_passing.length > 0 && r.still_failing.length === 0;

const listed = (ids: string[]) => `${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ` and ${ids.length - 5} more` : ''}`;

function reproductionNote(
  files: string[],
  failedOnBase: string[],
  nowPassing: string[],
  still: string[],
  leftAlone: string[],
): string {
  if (still.length > 0) return `the change's own tests still fail with the change: ${listed(still)}`;
  const alone = leftAlone.length
    ? ` (${listed(leftAlone)} failed before and after, in lines the change did not touch: pre-existing)`
    : '';
  if (nowPassing.length > 0)
    return `reproduced: ${listed(nowPassing)} failed on the base commit and pass with the change${alone}`;
  if (failedOnBase.length === 0)
    return `the change's tests (${listed(files)}) pass on the base commit too: they do not reproduce the request`;
  return `the change's tests that failed on the base commit (${listed(failedOnBase)}) are not reported passing with the change`;
}
