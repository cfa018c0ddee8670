// Definitions found by per-language regular expressions. An approximation: tree-sitter
// grammars replace this later; until then a definition in an odd layout may be missed.

const PY = [/^\s*(?:async\s+)?def\s+([A-Za-z_]\w*)/gm, /^\s*class\s+([A-Za-z_]\w*)/gm];
const JS = [
  /\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)/g,
  /\bclass\s+([A-Za-z_$][\w$]*)/g,
  /\b(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;]+)?=/g,
  /\b(?:interface|type|enum)\s+([A-Za-z_$][\w$]*)/g,
  // Methods: an indented name followed by a parameter list and a body.
  /^\s+(?:(?:public|private|protected|static|async|readonly|get|set|override)\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*(?::[^{;]+)?\{/gm,
];
const GO = [/^func\s+(?:\([^)]*\)\s*)?([A-Za-z_]\w*)/gm, /^type\s+([A-Za-z_]\w*)/gm];
const RUST = [/\bfn\s+([A-Za-z_]\w*)/g, /\b(?:struct|enum|trait|type|mod)\s+([A-Za-z_]\w*)/g, /\bimpl(?:<[^>]*>)?\s+(?:[\w:]+\s+for\s+)?([A-Za-z_]\w*)/g];
const JAVA = [
  /\b(?:class|interface|enum|record)\s+([A-Za-z_]\w*)/g,
  /^\s*(?:(?:public|private|protected|static|final|abstract|synchronized|native)\s+)+[\w<>[\],\s]+?\s+([A-Za-z_]\w*)\s*\(/gm,
];

const BY_EXTENSION: Record<string, RegExp[]> = {
  py: PY, pyi: PY,
  js: JS, jsx: JS, mjs: JS, cjs: JS, ts: JS, tsx: JS, mts: JS, cts: JS,
  go: GO,
  rs: RUST,
  java: JAVA, kt: JAVA, scala: JAVA, cs: JAVA,
};

const NOT_NAMES = new Set(['if', 'for', 'while', 'switch', 'catch', 'return', 'function', 'constructor', 'else', 'do', 'try', 'new']);

/** The names a file defines, deduplicated, in order of appearance. */
export function extractSymbols(path: string, content: string): string[] {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  const patterns = BY_EXTENSION[ext];
  if (!patterns) return [];
  const names = new Set<string>();
  for (const re of patterns) for (const m of content.matchAll(re)) if (m[1] && !NOT_NAMES.has(m[1])) names.add(m[1]);
  return [...names];
}
