import { dirOf } from './paths.js';
import { splitIdentifier, tokenize } from './tokenize.js';

/*
 * A file whose name is made of the title's words: "Morphing a call activity to an expanded sub-process
 * should add a start event" and `SubProcessStartEventBehavior.js`. Reports on an application's behaviour
 * describe it in the words its modules are named with, one word at a time, where neither the whole name
 * (the file-name rule) nor a family's name (family-names.ts) is written. A word that many of the
 * repository's files are named with (`Behavior`, `Provider`, `util`) says nothing of which one.
 */

/** A word in this share of the file names (or this many at least) is the repository's vocabulary, not a name. */
const COMMON_SHARE = 0.04;
const COMMON_MIN = 8;
/** A name of fewer telling words is too easily made of any title's words. */
const MIN_WORDS = 2;

/** A word as both sides compare it: lower case, a plural's `s` off. */
const norm = (w: string) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w);

/** The words of a file's name: `SubProcessStartEventBehavior.js` → sub, process, start, event, behavior. */
export function nameWords(path: string): string[] {
  const stem = path.slice(path.lastIndexOf('/') + 1).replace(/\.[^.]+$/, '');
  return stem
    .split(/[-.]+/)
    .flatMap((part) => splitIdentifier(part))
    .filter((w) => w.length >= 3 && /^[a-z]+$/.test(w))
    .map(norm);
}

/**
 * The files (by index into `paths`) whose name's telling words, two or more, are all in `title`,
 * with the words that matched.
 */
export function titleNamedFiles(paths: readonly string[], title: string): Map<number, string[]> {
  const words = paths.map((p) => [...new Set(nameWords(p))]);
  const df = new Map<string, number>();
  for (const ws of words) for (const w of ws) df.set(w, (df.get(w) ?? 0) + 1);
  const common = Math.max(COMMON_MIN, COMMON_SHARE * paths.length);
  const said = new Set(tokenize(title).map(norm));
  const out = new Map<number, string[]>();
  words.forEach((ws, i) => {
    const telling = ws.filter((w) => (df.get(w) ?? 0) < common);
    if (telling.length >= MIN_WORDS && telling.every((w) => said.has(w))) out.set(i, telling);
  });
  return out;
}

/**
 * The files (by index into `paths`) in a directory whose name's telling words, two or more, are all in
 * `title`, with the words that matched: "Code path analysis for (a && b) ?? c" and the modules of
 * `lib/linter/code-path-analysis/`. A feature is often a directory of modules none of which is named
 * for it alone.
 */
export function titleNamedDirectories(paths: readonly string[], title: string): Map<number, string[]> {
  const dirs = [...new Set(paths.map(dirOf).filter(Boolean))];
  // A directory's name as a file's, its last dot kept (`highlight.js/` is not `highlight`): a stand-in extension.
  const words = new Map(dirs.map((d) => [d, [...new Set(nameWords(`${d}.dir`))]]));
  const df = new Map<string, number>();
  for (const ws of words.values()) for (const w of ws) df.set(w, (df.get(w) ?? 0) + 1);
  const common = Math.max(COMMON_MIN, COMMON_SHARE * dirs.length);
  const said = new Set(tokenize(title).map(norm));
  const matched = new Map<string, string[]>();
  for (const [d, ws] of words) {
    const telling = ws.filter((w) => (df.get(w) ?? 0) < common);
    if (telling.length >= MIN_WORDS && telling.every((w) => said.has(w))) matched.set(d, telling);
  }
  const out = new Map<number, string[]>();
  paths.forEach((p, i) => {
    const hit = matched.get(dirOf(p));
    if (hit) out.set(i, hit);
  });
  return out;
}
