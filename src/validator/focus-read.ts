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
  input: Pick<FocusInput, 'changed' | 'lastFailures' | 'max' | 'substrings'>,
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

/** The tree's package.json as an object, or undefined (none, too large, not JSON, not an object). */
function packageJsonIn(repoDir: string): Record<string, unknown> | undefined {
  const text = repoFiles(repoDir).readText('package.json', { maxBytes: 1_000_000 });
  if (text === undefined) return undefined;
  try {
    const pkg: unknown = JSON.parse(text);
    return typeof pkg === 'object' && pkg !== null ? (pkg as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The `test` script of the tree's package.json, or undefined. */
export function testScriptIn(repoDir: string): string | undefined {
  const scripts = packageJsonIn(repoDir)?.scripts;
  const script =
    typeof scripts === 'object' && scripts !== null ? (scripts as Record<string, unknown>).test : undefined;
  return typeof script === 'string' ? script : undefined;
}

/** The tree whose test script decides: the base commit's, unless it has none (a change that adds the first tests). */
export function scriptTreeOf<T extends { repo: string }>(copies: { baseline: T; change: T }): T {
  return testScriptIn(copies.baseline.repo) !== undefined ? copies.baseline : copies.change;
}

/** The configuration files mocha reads from the directory it starts in, in its order. */
const MOCHA_RC = ['.mocharc.cjs', '.mocharc.js', '.mocharc.yaml', '.mocharc.yml', '.mocharc.jsonc', '.mocharc.json'];

/**
 * The mocha configuration in the tree that names test files of its own (`spec`, which mocha adds
 * to the files on its command line), or undefined: the file the script's `--config` names, else
 * the first `.mocharc.*`, and package.json's `mocha`. A `spec` anywhere in the file counts (a
 * `.mocharc.js` is code, not read further): taking it for one costs only the focused pass.
 */
export function mochaSpecIn(repoDir: string, script: string | undefined): string | undefined {
  const repo = repoFiles(repoDir);
  const read = (path: string) => repo.readText(path, { maxBytes: 1_000_000 });
  const named = /--config[= ]+(\S+)/.exec(script ?? '')?.[1]?.replace(/^\.\//, '');
  const rc = /--no-config\b/.test(script ?? '')
    ? undefined
    : named !== undefined
      ? named
      : MOCHA_RC.find((path) => read(path) !== undefined);
  if (rc !== undefined && /\bspec\b/.test(read(rc) ?? '')) return rc;
  if (/--no-package\b/.test(script ?? '')) return undefined;
  const own = packageJsonIn(repoDir)?.mocha;
  return typeof own === 'object' && own !== null && 'spec' in own ? 'package.json' : undefined;
}
