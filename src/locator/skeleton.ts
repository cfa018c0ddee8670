// Outlines of source files for a model: the signatures of a file's definitions with their line
// numbers, the bodies elided, so a large file can be shown in a few hundred lines; and numbered
// slices of a file in the same format, for the spans that matter.
import { type Definition, regexDefinitions } from './symbols.js';
import { grammarOf, parseDefinitions } from './treesitter.js';

export interface SkeletonSymbol {
  name: string;
  kind: string;
  /** 1-based, inclusive */
  startLine: number;
  endLine: number;
}

export interface FileSkeleton {
  /**
   * The tree-sitter grammar used (`python`, `typescript`...), else the language guessed from the extension for the
   * regex fallback, else null.
   */
  language: string | null;
  symbols: SkeletonSymbol[];
  /** Numbered signature lines (`  42| def send(self, request, **kwargs):`) and `...` where lines are elided. */
  skeleton: string;
}

const FALLBACK_LANGUAGES: Record<string, string> = {
  kt: 'kotlin',
  kts: 'kotlin',
  scala: 'scala',
  swift: 'swift',
  lua: 'lua',
  pl: 'perl',
  r: 'r',
  jl: 'julia',
  ex: 'elixir',
  exs: 'elixir',
  erl: 'erlang',
  hs: 'haskell',
  ml: 'ocaml',
  clj: 'clojure',
  dart: 'dart',
  vue: 'vue',
  svelte: 'svelte',
  m: 'objective-c',
  mm: 'objective-c',
  zsh: 'zsh',
};

/** A signature longer than this many lines is cut (the rest elided). */
const MAX_HEADER_LINES = 8;
/** Displayed lines are cut at this many characters (minified code). */
const MAX_LINE_CHARS = 300;

const widthFor = (lineCount: number) => Math.max(4, String(lineCount).length);

function numbered(n: number, line: string, width: number): string {
  const text = line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
  return `${String(n).padStart(width)}| ${text}`.trimEnd();
}

const splitLines = (source: string) => source.replace(/\r\n?/g, '\n').split('\n');

/**
 * Lines startLine..endLine (1-based, inclusive, clamped to the file) with their numbers, in the
 * format of fileSkeleton (`  42| def send(...)`).
 */
export function sliceLines(source: string, startLine: number, endLine: number): string {
  const lines = splitLines(source);
  const width = widthFor(lines.length);
  const from = Math.max(1, Math.floor(startLine));
  const to = Math.min(lines.length, Math.floor(endLine));
  const out: string[] = [];
  for (let n = from; n <= to; n++) out.push(numbered(n, lines[n - 1]!, width));
  return out.join('\n');
}

/**
 * The outline of a file: its definitions (tree-sitter where the language has a grammar, the
 * regex and indentation approximation elsewhere) and a skeleton of their signatures, with
 * `...` for the lines in between (bodies, imports, statements). A file without definitions
 * has an empty symbol list and a skeleton of one elision.
 */
export async function fileSkeleton(path: string, source: string): Promise<FileSkeleton> {
  const text = source.replace(/\r\n?/g, '\n');
  const grammar = grammarOf(path);
  let defs: Definition[] | null = grammar ? await parseDefinitions(path, text) : null;
  let language: string | null = grammar;
  if (!defs) {
    defs = regexDefinitions(path, text);
    const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
    language = grammar ?? FALLBACK_LANGUAGES[ext] ?? (defs.length ? ext : null);
  }
  const lines = splitLines(text);
  const width = widthFor(lines.length);
  const shown = new Set<number>();
  for (const d of defs) {
    const last = Math.min(d.headerEnd, d.startLine + MAX_HEADER_LINES - 1, lines.length);
    for (let n = d.startLine; n <= last; n++) shown.add(n);
  }
  const out: string[] = [];
  const elide = (from: number, to: number) => {
    // Lines from..to (1-based, inclusive) are not shown: one `...` at the indentation of the first non-blank one, or
    // the line itself when it is the only one.
    const nonBlank: number[] = [];
    for (let n = from; n <= to; n++) if (lines[n - 1]!.trim()) nonBlank.push(n);
    if (nonBlank.length === 0) return;
    if (nonBlank.length === 1) {
      out.push(numbered(nonBlank[0]!, lines[nonBlank[0]! - 1]!, width));
      return;
    }
    const indent = /^\s*/.exec(lines[nonBlank[0]! - 1]!)![0];
    out.push(`${' '.repeat(width)}| ${indent}...`);
  };
  let next = 1;
  for (const n of [...shown].sort((a, b) => a - b)) {
    if (n > next) elide(next, n - 1);
    out.push(numbered(n, lines[n - 1]!, width));
    next = n + 1;
  }
  if (next <= lines.length) elide(next, lines.length);
  return {
    language,
    symbols: defs.map((d) => ({ name: d.name, kind: d.kind, startLine: d.startLine, endLine: d.endLine })),
    skeleton: out.join('\n'),
  };
}
