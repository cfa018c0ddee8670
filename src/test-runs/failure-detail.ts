import type { FailureDetail as NewFailureDetail } from '../step-contract/fix.js';
import type { FailureDetail, Frame } from './parser-types.js';

/** A failing test's message as the fixer is shown it: the runner's words, bounded. */
export const MESSAGE_CHARS = 500;

/**
 * Frames that are not the repository's own code: installed packages, the interpreter's or
 * Node's library, the test runners themselves. Paths are relative to the checkout once
 * normalizeOutput has stripped its root, so an absolute path is outside it.
 */
const FOREIGN = [
  /(^|\/)(site-packages|dist-packages|node_modules|\.venv|venv|\.tox|\.cargo|\.rustup|go\/pkg\/mod)\//,
  /^(\/|<|node:|internal\/|~)/,
  /(^|\/)(_pytest|pluggy|unittest)\//,
  /^\.\.\//,
];

/** The frame when it is a file of the checkout, else undefined. `file://` URLs are read as paths. */
export function repoFrame(rawPath: string, line: string | number): Frame | undefined {
  const path = rawPath.replace(/^file:\/\/+/, '').replace(/^\.\//, '');
  const n = Number(line);
  if (!path || !Number.isInteger(n) || n < 1 || FOREIGN.some((re) => re.test(path))) return undefined;
  return { path, line: n };
}

/** Message lines joined, trimmed, blank runs collapsed, cut at MESSAGE_CHARS. */
export function messageOf(lines: string[]): string | undefined {
  const text = lines
    .map((l) => l.trimEnd())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  if (!text) return undefined;
  return text.length > MESSAGE_CHARS ? `${text.slice(0, MESSAGE_CHARS - 1)}…` : text;
}

/** A detail with only what was found; undefined when nothing was. */
export function detail(
  message: string | undefined,
  frame: Frame | undefined,
  file?: string,
): FailureDetail | undefined {
  if (message === undefined && frame === undefined) return undefined;
  return {
    ...(message !== undefined ? { message } : {}),
    ...(frame ? { frame } : {}),
    ...(file ? { file } : {}),
  };
}

/** How many failing tests are told in detail: the rest are named in new_failures only. */
export const MAX_DETAILED = 30;

/** The file a test id names: pytest's `path.py::test`, vitest's `path > describe > test`. */
function fileOfId(id: string): string | undefined {
  const m = /^([^\s:>]+\.\w+)(?:::| > )/.exec(id);
  return m?.[1];
}

/** The new failures (not the run-level ones) with what the output said about each, in order, bounded. */
export function newFailureDetails(newFailures: string[], details: Map<string, FailureDetail>): NewFailureDetail[] {
  return newFailures
    .filter((id) => !id.startsWith('('))
    .slice(0, MAX_DETAILED)
    .map((test) => {
      const d = details.get(test);
      const file = d?.file ?? fileOfId(test);
      return {
        test,
        ...(file ? { test_file: file } : {}),
        ...(d?.message !== undefined ? { message: d.message } : {}),
        ...(d?.frame ? { frame: d.frame } : {}),
      };
    });
}
