// Definitions of a file: from its tree-sitter grammar (treesitter.ts) where there is one, else
// from per-language regular expressions over lines, an approximation in which a definition in an
// odd layout may be missed and a body's end is guessed from indentation.
import type { Definition, DefinitionParser } from './treesitter.js';

export type { Definition } from './treesitter.js';

type LinePattern = { re: RegExp; kind: string };

const PY: LinePattern[] = [
  { re: /^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)/, kind: 'function' },
  { re: /^\s*class\s+([A-Za-z_]\w*)/, kind: 'class' },
];
const JS: LinePattern[] = [
  { re: /\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)/, kind: 'function' },
  { re: /\bclass\s+([A-Za-z_$][\w$]*)/, kind: 'class' },
  { re: /^\s*(?:export\s+)?(?:interface)\s+([A-Za-z_$][\w$]*)/, kind: 'interface' },
  { re: /^\s*(?:export\s+)?(?:type)\s+([A-Za-z_$][\w$]*)\s*(?:<[^=]*>)?\s*=/, kind: 'type' },
  { re: /^\s*(?:export\s+)?(?:const\s+)?enum\s+([A-Za-z_$][\w$]*)/, kind: 'enum' },
  { re: /^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;]+)?=/, kind: 'variable' },
  // Methods: an indented name followed by a parameter list and a body.
  {
    re: /^\s+(?:(?:public|private|protected|static|async|readonly|get|set|override)\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::[^{;]+)?\{/,
    kind: 'method',
  },
];
const GO: LinePattern[] = [
  { re: /^func\s+\([^)]*\)\s*([A-Za-z_]\w*)/, kind: 'method' },
  { re: /^func\s+([A-Za-z_]\w*)/, kind: 'function' },
  { re: /^type\s+([A-Za-z_]\w*)/, kind: 'type' },
];
const RUST: LinePattern[] = [
  { re: /\bfn\s+([A-Za-z_]\w*)/, kind: 'function' },
  { re: /\b(struct|enum|trait|type|mod)\s+([A-Za-z_]\w*)/, kind: '$1' },
  { re: /\bimpl(?:<[^>]*>)?\s+(?:[\w:]+(?:<[^>]*>)?\s+for\s+)?([A-Za-z_]\w*)/, kind: 'impl' },
];
const JAVA: LinePattern[] = [
  { re: /\b(class|interface|enum|record|object|trait)\s+([A-Za-z_]\w*)/, kind: '$1' },
  {
    re: /^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|native|override|internal|suspend)\s+)+[\w<>[\],.?\s]+?\s+([A-Za-z_]\w*)\s*\(/,
    kind: 'method',
  },
  {
    re: /^\s*(?:(?:public|private|protected|override|internal|suspend|inline)\s+)*fun\s+(?:<[^>]*>\s*)?(?:[\w.]+\.)?([A-Za-z_]\w*)/,
    kind: 'function',
  },
  { re: /^\s*(?:(?:public|private|protected|override)\s+)*def\s+([A-Za-z_]\w*)/, kind: 'function' },
];
/** Other languages: a keyword that introduces a definition in many of them, at the start of a line. */
const GENERIC: LinePattern[] = [
  {
    re: /^\s*(?:(?:export|public|private|protected|static|async|override|abstract|final|inline|open|internal|local|pub(?:\([^)]*\))?)\s+)*(class|interface|struct|enum|trait|object|module|protocol|extension|def|defp|defmodule|fun|func|fn|function|sub|proc|method)\s+([A-Za-z_$][\w$]*(?:[.:][A-Za-z_$][\w$]*)*[?!]?)/,
    kind: '$1',
  },
];

const BY_EXTENSION: Record<string, LinePattern[]> = {
  py: PY,
  pyi: PY,
  js: JS,
  jsx: JS,
  mjs: JS,
  cjs: JS,
  ts: JS,
  tsx: JS,
  mts: JS,
  cts: JS,
  vue: JS,
  svelte: JS,
  go: GO,
  rs: RUST,
  java: JAVA,
  kt: JAVA,
  kts: JAVA,
  scala: JAVA,
  cs: JAVA,
};
const NO_DEFINITIONS = new Set([
  'md',
  'rst',
  'txt',
  'adoc',
  'json',
  'yaml',
  'yml',
  'toml',
  'cfg',
  'ini',
  'xml',
  'html',
  'css',
  'scss',
  'sql',
  'proto',
  'graphql',
  'gradle',
  'cmake',
]);

const NOT_NAMES = new Set([
  'if',
  'for',
  'while',
  'switch',
  'catch',
  'return',
  'function',
  'constructor',
  'else',
  'do',
  'try',
  'new',
  'super',
  'this',
]);

const KINDS: Record<string, string> = {
  def: 'function',
  defp: 'function',
  fun: 'function',
  func: 'function',
  fn: 'function',
  sub: 'function',
  proc: 'function',
  defmodule: 'module',
  mod: 'module',
  object: 'class',
  record: 'class',
  protocol: 'interface',
  extension: 'impl',
};

const indentOf = (line: string) => /^[ \t]*/.exec(line)![0].replace(/\t/g, '    ').length;

/**
 * Definitions found line by line with regular expressions; each body ends before the next
 * non-blank line indented no deeper than its first line (a closing `}`, `end` or `)` at that
 * indentation belongs to it).
 */
export function regexDefinitions(path: string, content: string): Definition[] {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  if (NO_DEFINITIONS.has(ext)) return [];
  const patterns = BY_EXTENSION[ext] ?? GENERIC;
  const lines = content.split('\n');
  const defs: Definition[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.length > 1000) continue;
    for (const { re, kind } of patterns) {
      const m = re.exec(line);
      if (!m) continue;
      const raw = kind === '$1' ? m[2] : m[1];
      const name = raw?.split(/[.:]/).pop();
      if (!name || NOT_NAMES.has(name)) continue;
      const k = kind === '$1' ? m[1]! : kind;
      const indent = indentOf(line);
      let end = i;
      for (let j = i + 1; j < lines.length; j++) {
        const l = lines[j]!;
        if (!l.trim()) continue;
        if (indentOf(l) > indent) {
          end = j;
          continue;
        }
        if (/^\s*([}\])]|end\b)/.test(l)) end = j;
        break;
      }
      let headerEnd = i;
      while (headerEnd < Math.min(end, i + 5) && !/[{:=]\s*(#.*|\/\/.*)?$/.test(lines[headerEnd]!)) headerEnd++;
      if (!/[{:=]\s*(#.*|\/\/.*)?$/.test(lines[headerEnd]!)) headerEnd = i;
      defs.push({ name, kind: KINDS[k] ?? k, startLine: i + 1, endLine: end + 1, headerEnd: headerEnd + 1 });
      break;
    }
  }
  // Containers by nesting, as for the tree-sitter definitions.
  const stack: Definition[] = [];
  for (const d of defs) {
    while (stack.length && stack[stack.length - 1]!.endLine < d.startLine) stack.pop();
    const direct = stack[stack.length - 1];
    if (direct && ['class', 'interface', 'struct', 'trait', 'impl', 'enum', 'module'].includes(direct.kind)) {
      d.container = direct.name;
      if (d.kind === 'function') d.kind = 'method';
    }
    stack.push(d);
  }
  return defs;
}

/** The definitions of a file: the parser's when it has a grammar for the file, else the regex fallback's. */
export function definitionsOf(parser: DefinitionParser | null, path: string, content: string): Definition[] {
  return parser?.definitions(path, content) ?? regexDefinitions(path, content);
}

/** The names a file defines (regex fallback), deduplicated, in order of appearance. */
export function extractSymbols(path: string, content: string): string[] {
  return [...new Set(regexDefinitions(path, content).map((d) => d.name))];
}
