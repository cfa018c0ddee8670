// The focused pass (docs/validator.md, "The focused pass"): which test files a change touches first,
// and the command that runs only them. Pure: the caller reads the tree (./focus-read.ts).
import type { TestRecipe } from '../environments/detect.js';
import { testFileOf } from './test-files.js';

/** At most this many test files in a focused pass: past it, the first pass is no longer fast. */
export const MAX_FOCUSED_FILES = 40;
/** How far the import graph is followed back from a changed module to the tests that load it. */
export const IMPORT_DEPTH = 3;

export type FocusReason = 'changed' | 'failed last time' | 'imports a changed module';

export interface FocusInput {
  /** The files the change adds or modifies, repository-relative. */
  changed: readonly string[];
  /** The previous verdict's failing tests, with the file a runner named for each (its `test_file`, its frame). */
  lastFailures: readonly { id: string; file?: string; frame?: string }[];
  /** The repository's test files (the change's tree). */
  testFiles: readonly string[];
  /** The import graph: a file → the repository's files it imports (JavaScript/TypeScript and Python). */
  imports: ReadonlyMap<string, readonly string[]>;
  max?: number;
  /**
   * The runner reads a file argument as a part of a path, case aside (vitest's filters): a file
   * whose path is part of another test file's is left out, or both would run.
   */
  substrings?: boolean;
}

export interface Focus {
  /** The test files, in order: the change's own, last time's failures, then importers nearest first. */
  files: string[];
  reasons: Record<string, FocusReason>;
  /** Files found and left out past `max`. */
  leftOut: number;
  /** Files left out because a runner could misread their name (a glob, pytest's `::`, a control character). */
  unsafe: string[];
  /** Files left out because, read as a part of a path (`substrings`), their name picks other test files too. */
  ambiguous: string[];
}

/**
 * A path a runner reads as exactly that file once shell-quoted: no control character, no glob
 * character (mocha, vitest and node expand them), no `::` (pytest's node ids).
 */
export const runnerSafePath = (path: string): boolean =>
  ![...path].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f) &&
  !/[*?[\]{}!]/.test(path) &&
  !path.includes('::') &&
  !path.startsWith('/');

/**
 * The test files a change touches first: the test files it adds or modifies, the files of the
 * tests that failed last time, and the test files that import a changed module (through at most
 * IMPORT_DEPTH imports of non-test modules), nearest first; at most `max`.
 */
export function selectFocus(input: FocusInput): Focus {
  const max = input.max ?? MAX_FOCUSED_FILES;
  const tests = new Set(input.testFiles);
  const reasons = new Map<string, FocusReason>();
  const add = (file: string, reason: FocusReason) => {
    if (!reasons.has(file)) reasons.set(file, reason);
  };
  for (const path of input.changed) if (tests.has(path)) add(path, 'changed');
  for (const f of input.lastFailures) {
    const file = testFileOf(f.id, input.testFiles, {
      ...(f.file ? { file: f.file } : {}),
      ...(f.frame ? { frame: { path: f.frame } } : {}),
    });
    if (file) add(file, 'failed last time');
  }
  // The graph read backwards: who imports each file.
  const importers = new Map<string, string[]>();
  for (const [from, targets] of input.imports)
    for (const to of targets) importers.set(to, [...(importers.get(to) ?? []), from]);
  let frontier = input.changed.filter((p) => !tests.has(p));
  const seen = new Set(frontier);
  for (let depth = 1; depth <= IMPORT_DEPTH && frontier.length > 0; depth++) {
    const next: string[] = [];
    for (const module of frontier)
      for (const from of [...(importers.get(module) ?? [])].sort()) {
        if (seen.has(from)) continue;
        seen.add(from);
        if (tests.has(from)) add(from, 'imports a changed module');
        // A test file's importers are not followed: a test that imports another test's helpers is not its test.
        else next.push(from);
      }
    frontier = next;
  }
  const all = [...reasons.keys()];
  const unsafe = all.filter((p) => !runnerSafePath(p));
  const lower = input.substrings ? input.testFiles.map((t) => t.toLowerCase()) : [];
  const picksOthers = (path: string) => {
    const p = path.toLowerCase();
    return lower.some((t) => t !== p && t.includes(p));
  };
  const ambiguous = all.filter((p) => runnerSafePath(p) && picksOthers(p));
  const safe = all.filter((p) => runnerSafePath(p) && !picksOthers(p));
  const files = safe.slice(0, max);
  return {
    files,
    reasons: Object.fromEntries(files.map((f) => [f, reasons.get(f)!])),
    leftOut: safe.length - files.length,
    unsafe,
    ambiguous,
  };
}

/** One shell word: single-quoted, a `'` inside closed, escaped and reopened; a leading `-` made `./-`. */
export function shellWord(path: string): string {
  const p = path.startsWith('-') ? `./${path}` : path;
  return `'${p.replaceAll("'", `'\\''`)}'`;
}

export type FocusedCommand = { command: string } | { refused: string };

/**
 * The command that runs only `files`, from the command the validator runs (`timed`: the recipe's
 * with its flags), for the runners where a file argument means "only this file": pytest, and a
 * Node test script whose last command is jest (`--runTestsByPath`), vitest, mocha, jasmine or
 * `node --test` and names no test files of its own, in the script or (mocha's `spec`, which
 * mocha adds to the command line's files) in the configuration file `ownSpecIn`. Otherwise
 * refused, saying why. Each file is one quoted shell word.
 */
export function focusedCommand(
  recipe: Pick<TestRecipe, 'source' | 'perTest' | 'command'>,
  timed: string,
  files: readonly string[],
  script?: string,
  ownSpecIn?: string,
): FocusedCommand {
  if (files.length === 0) return { refused: 'no test file to focus on' };
  if (recipe.source !== 'detected')
    return { refused: `the test command is the repository's own (${recipe.source}): it is run as written` };
  const args = files.map(shellWord).join(' ');
  const kind = recipe.perTest.kind;
  if (kind === 'pytest') return { command: `${timed} ${args}` };
  if (kind === 'jest' || kind === 'vitest' || kind === 'mocha' || kind === 'jasmine' || kind === 'node-test') {
    if (script === undefined) return { refused: 'the test script could not be read' };
    const own = ownTestFiles(script);
    if (own === undefined) return { refused: 'the test script starts its runner through node or a wrapper' };
    if (own.length > 0 && kind !== 'jest')
      return { refused: `the test script names its own test files (${own.join(' ')}): more files would add to them` };
    if (kind === 'mocha' && ownSpecIn !== undefined)
      return { refused: `mocha's configuration (${ownSpecIn}) names its own test files: more files would add to them` };
    // npm passes what follows `--` to the script; the flags the validator added already opened it.
    const pass = timed.includes(`${recipe.command} -- `) || !recipe.command.startsWith('npm ') ? '' : ' --';
    return { command: `${timed}${pass}${kind === 'jest' ? ' --runTestsByPath' : ''} ${args}` };
  }
  return {
    refused: `the ${kind === 'none' ? "repository's" : kind} runner has no way to run only some test files here`,
  };
}

/**
 * The positional arguments of a test script's last command (what it runs as tests), or undefined
 * when the runner is started some other way (`node path/to/runner.js`, `npx`, a wrapper). A bare
 * word after an option is taken for the option's value.
 */
function ownTestFiles(script: string): string[] | undefined {
  const last = lastCommandOf(script);
  if (!last) return undefined;
  const { bin, args: rest } = last;
  if (!['jest', 'vitest', 'mocha', '_mocha', 'jasmine', 'node'].includes(bin)) return undefined;
  if (bin === 'node' && !rest.includes('--test')) return undefined;
  if (bin === 'vitest' && rest[0] === 'run') rest.shift();
  const own: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const t = rest[i]!;
    if (t.startsWith('-')) {
      if (!t.includes('=') && rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('-')) i++;
      continue;
    }
    own.push(t);
  }
  return own;
}

/** A test script's last command (what it runs as tests): its program and arguments, leading variables aside. */
export function lastCommandOf(script: string): { bin: string; args: string[] } | undefined {
  const last = script.split(/&&|\|\||;|\|/).pop() ?? '';
  const tokens = last.trim().split(/\s+/).filter(Boolean);
  while (tokens.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(tokens[0]!)) tokens.shift();
  const [bin, ...args] = tokens;
  return bin ? { bin, args } : undefined;
}
