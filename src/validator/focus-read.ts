// What the focused pass reads from a tree (./focus.ts decides): its test files, its import graph,
// its test script. Every read goes through the confined file module: no link leads out of the tree.
import type { ValidatorOutput } from '../step-contract/fix.js';
import { ModuleResolver, pythonImports } from '../locator/imports.js';
import { JsResolver, isJsFile, jsImports } from '../locator/js-imports.js';
import { listCandidateFiles, repoFiles } from '../locator/files.js';
import { isTestFile } from '../text/test-paths.js';
import { type Focus, type FocusInput, selectFocus } from './focus.js';

/** The import graph is read from at most this many files, each at most this large: the first pass must stay fast. */
const MAX_GRAPH_FILES = 5_000;
const MAX_GRAPH_FILE_BYTES = 256 * 1024;

/** The previous verdict's failing tests, as the focus reads them: their ids and the files a runner named. */
export function lastFailuresOf(previous: ValidatorOutput | undefined): FocusInput['lastFailures'] {
  if (!previous) return [];
  const details = new Map((previous.failure_details ?? []).map((d) => [d.test, d]));
  return previous.new_failures
    .filter((id) => !id.startsWith('('))
    .map((id) => {
      const d = details.get(id);
      return { id, ...(d?.test_file ? { file: d.test_file } : {}), ...(d?.frame ? { frame: d.frame.path } : {}) };
    });
}

/** The focused pass's test files in the tree at `repoDir`, for a change of `changed` files. */
export function focusIn(
  repoDir: string,
  input: { changed: readonly string[]; lastFailures: FocusInput['lastFailures']; max?: number },
): Focus {
  const paths = listCandidateFiles(repoDir);
  const repo = repoFiles(repoDir);
  const read = (path: string) => repo.readText(path, { maxBytes: MAX_GRAPH_FILE_BYTES });
  const modules = new ModuleResolver(paths);
  const jsModules = new JsResolver(paths, read);
  const imports = new Map<string, string[]>();
  const graphed = paths.filter((p) => p.endsWith('.py') || isJsFile(p)).slice(0, MAX_GRAPH_FILES);
  for (const path of graphed) {
    const content = read(path);
    if (content === undefined) continue;
    const found = path.endsWith('.py') ? pythonImports(path, content, modules) : jsImports(path, content, jsModules);
    if (found.length) imports.set(path, found);
  }
  return selectFocus({ ...input, testFiles: paths.filter(isTestFile), imports });
}

/** The `test` script of the tree's package.json, or undefined. */
export function testScriptIn(repoDir: string): string | undefined {
  const text = repoFiles(repoDir).readText('package.json', { maxBytes: 1_000_000 });
  if (text === undefined) return undefined;
  try {
    const pkg = JSON.parse(text) as { scripts?: Record<string, unknown> };
    const script = pkg.scripts?.test;
    return typeof script === 'string' ? script : undefined;
  } catch {
    return undefined;
  }
}
