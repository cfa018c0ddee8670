// Definitions from tree-sitter WASM grammars (@vscode/tree-sitter-wasm): one query per language
// captures each definition node (`@def.<kind>`) and its name (`@name`).
import { createRequire } from 'node:module';
import TreeSitter from '@vscode/tree-sitter-wasm';
import type { Language, Node, Parser as ParserType, Query } from '@vscode/tree-sitter-wasm';

export interface Definition {
  name: string;
  /**
   * class, function, method, constructor, interface, type, enum, struct, trait, impl, module, constant, variable, macro
   */
  kind: string;
  /** 1-based, inclusive; the decorators of a Python definition included. */
  startLine: number;
  endLine: number;
  /** The last line of the signature (where the body starts), 1-based. */
  headerEnd: number;
  /** The enclosing class, impl, interface... (a Go method's receiver type), when there is one. */
  container?: string;
}

export type GrammarId =
  | 'javascript'
  | 'typescript'
  | 'tsx'
  | 'python'
  | 'go'
  | 'rust'
  | 'java'
  | 'c-sharp'
  | 'cpp'
  | 'php'
  | 'ruby'
  | 'bash';

const BY_EXTENSION: Record<string, GrammarId> = {
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  py: 'python',
  pyi: 'python',
  go: 'go',
  rs: 'rust',
  java: 'java',
  cs: 'c-sharp',
  cc: 'cpp',
  cpp: 'cpp',
  cxx: 'cpp',
  hpp: 'cpp',
  hh: 'cpp',
  hxx: 'cpp',
  c: 'cpp',
  h: 'cpp',
  php: 'php',
  rb: 'ruby',
  sh: 'bash',
  bash: 'bash',
};

/** The grammar of a path, by its extension; null when there is none (the regex fallback then). */
export function grammarOf(path: string): GrammarId | null {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  if (dot <= 0) return null;
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? null;
}

const JS_COMMON =
  `
(function_declaration name: (_) @name) @def.function
(generator_function_declaration name: (_) @name) @def.function
(class_declaration name: (_) @name) @def.class
(method_definition name: (_) @name) @def.method
(variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression) (class)]) ` +
  `@def.function
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name) ` +
  `@def.variable)))
(assignment_expression left: (member_expression property: (property_identifier) @name) right: ` +
  `[(arrow_function) (function_expression)]) @def.function
(pair key: (property_identifier) @name value: [(arrow_function) (function_expression)]) @def.method
`;
const TS_EXTRA = `
(abstract_class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(type_alias_declaration name: (_) @name) @def.type
(enum_declaration name: (_) @name) @def.enum
(internal_module name: (_) @name) @def.module
(function_signature name: (_) @name) @def.function
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(public_field_definition name: (_) @name value: [(arrow_function) (function_expression)]) @def.method
`;

const QUERIES: Record<GrammarId, string> = {
  javascript: JS_COMMON,
  typescript: JS_COMMON + TS_EXTRA,
  tsx: JS_COMMON + TS_EXTRA,
  python: `
(class_definition name: (identifier) @name) @def.class
(function_definition name: (identifier) @name) @def.function
(module (expression_statement (assignment left: (identifier) @name) @def.variable))
`,
  go: `
(function_declaration name: (_) @name) @def.function
(method_declaration name: (_) @name) @def.method
(type_spec name: (_) @name) @def.type
(type_alias name: (_) @name) @def.type
(source_file (const_declaration (const_spec name: (_) @name) @def.constant))
(source_file (var_declaration (var_spec name: (_) @name) @def.variable))
`,
  rust: `
(function_item name: (_) @name) @def.function
(function_signature_item name: (_) @name) @def.function
(struct_item name: (_) @name) @def.struct
(union_item name: (_) @name) @def.struct
(enum_item name: (_) @name) @def.enum
(trait_item name: (_) @name) @def.trait
(type_item name: (_) @name) @def.type
(mod_item name: (_) @name) @def.module
(const_item name: (_) @name) @def.constant
(static_item name: (_) @name) @def.constant
(macro_definition name: (_) @name) @def.macro
(impl_item type: (_) @name) @def.impl
`,
  java: `
(class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(enum_declaration name: (_) @name) @def.enum
(record_declaration name: (_) @name) @def.class
(annotation_type_declaration name: (_) @name) @def.interface
(method_declaration name: (_) @name) @def.method
(constructor_declaration name: (_) @name) @def.constructor
`,
  'c-sharp': `
(class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(struct_declaration name: (_) @name) @def.struct
(enum_declaration name: (_) @name) @def.enum
(record_declaration name: (_) @name) @def.class
(method_declaration name: (_) @name) @def.method
(constructor_declaration name: (_) @name) @def.constructor
(namespace_declaration name: (_) @name) @def.module
`,
  cpp:
    `
(function_definition declarator: (function_declarator declarator: (_) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (_) ` +
    `@name))) @def.function
(function_definition declarator: (reference_declarator (function_declarator declarator: (_) @name))) ` +
    `@def.function
(class_specifier name: (_) @name body: (_)) @def.class
(struct_specifier name: (_) @name body: (_)) @def.struct
(enum_specifier name: (_) @name body: (_)) @def.enum
(namespace_definition name: (_) @name) @def.module
`,
  php: `
(class_declaration name: (_) @name) @def.class
(interface_declaration name: (_) @name) @def.interface
(trait_declaration name: (_) @name) @def.trait
(enum_declaration name: (_) @name) @def.enum
(function_definition name: (_) @name) @def.function
(method_declaration name: (_) @name) @def.method
`,
  ruby: `
(class name: (_) @name) @def.class
(module name: (_) @name) @def.module
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
`,
  bash: `
(function_definition name: (_) @name) @def.function
`,
};

const CONTAINERS = new Set(['class', 'interface', 'struct', 'trait', 'impl', 'enum', 'module']);

interface Grammar {
  language: Language;
  query: Query | null;
}

interface Runtime {
  Parser: typeof ParserType;
  grammars: Map<GrammarId, Promise<Grammar | null>>;
}

const require = createRequire(import.meta.url);

/**
 * The runtime, initialised once per process. A memoised promise rather than per-call state:
 * Parser.init() compiles the tree-sitter WASM module and each Language.load() compiles a
 * grammar (tens of milliseconds each), and both are immutable once loaded, so every caller
 * shares them. Nothing else is kept at module level; parsers and trees belong to their caller.
 */
let runtime: Promise<Runtime> | null = null;

function loadRuntime(): Promise<Runtime> {
  runtime ??= TreeSitter.Parser.init().then(() => ({ Parser: TreeSitter.Parser, grammars: new Map() }));
  return runtime;
}

/**
 * A query from the patterns that this grammar's version knows: a pattern naming a node type it lacks is dropped, not
 * fatal.
 */
function compileQuery(language: Language, source: string): Query | null {
  try {
    return new TreeSitter.Query(language, source);
  } catch {
    const patterns = source.split('\n').filter((l) => l.trim());
    const ok = patterns.filter((p) => {
      try {
        new TreeSitter.Query(language, p).delete();
        return true;
      } catch {
        return false;
      }
    });
    return ok.length ? new TreeSitter.Query(language, ok.join('\n')) : null;
  }
}

async function loadGrammar(rt: Runtime, id: GrammarId): Promise<Grammar | null> {
  let grammar = rt.grammars.get(id);
  if (!grammar) {
    grammar = (async () => {
      try {
        const language = await TreeSitter.Language.load(
          require.resolve(`@vscode/tree-sitter-wasm/wasm/tree-sitter-${id}.wasm`),
        );
        return { language, query: compileQuery(language, QUERIES[id]) };
      } catch {
        return null; // a grammar that does not load: its files go to the regex fallback
      }
    })();
    rt.grammars.set(id, grammar);
  }
  return grammar;
}

/** Files beyond these are not parsed (the regex fallback, or nothing): huge, minified or generated. */
export const MAX_PARSE_BYTES = 1_000_000;
const MAX_AVG_LINE = 400;
const PARSE_BUDGET_MS = 2_000;

export function tooBigToParse(source: string): boolean {
  if (source.length > MAX_PARSE_BYTES) return true;
  let lines = 1;
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) lines++;
  return source.length / lines > MAX_AVG_LINE || source.includes('\0');
}

const lastSegment = (text: string) => {
  const noGenerics = text.replace(/<[\s\S]*$/, '').replace(/[&*\s]/g, '');
  const parts = noGenerics.split(/::|\./);
  return parts[parts.length - 1] ?? noGenerics;
};

function goReceiver(def: Node): string | undefined {
  const recv = def.childForFieldName('receiver')?.text;
  const m = recv && /([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*\)\s*$/.exec(recv);
  return m?.[1];
}

/**
 * The line (0-based) where the signature ends: the body's first line when the body starts on a line of the signature,
 * else the line before it.
 */
function headerEndRow(def: Node, lines: string[]): number {
  const body = def.childForFieldName('body') ?? def.childForFieldName('value');
  if (!body || body.startPosition.row <= def.startPosition.row) return def.startPosition.row;
  const row = body.startPosition.row;
  const before = (lines[row] ?? '').slice(0, body.startPosition.column);
  return before.trim() ? row : Math.max(def.startPosition.row, row - 1);
}

/** A parser bound to the grammars it was made for; parse() is synchronous. Free it with dispose(). */
export interface DefinitionParser {
  /** The definitions of the file, or null when its language has no loaded grammar or the file is too big to parse. */
  definitions(path: string, source: string): Definition[] | null;
  dispose(): void;
}

/** Loads the grammars the paths need (once per process), and returns a parser for them. */
export async function createDefinitionParser(paths: Iterable<string>): Promise<DefinitionParser> {
  const rt = await loadRuntime();
  const ids = new Set<GrammarId>();
  for (const p of paths) {
    const id = grammarOf(p);
    if (id) ids.add(id);
  }
  const loaded = new Map<GrammarId, Grammar>();
  for (const id of ids) {
    const g = await loadGrammar(rt, id);
    if (g?.query) loaded.set(id, g);
  }
  const parser = new rt.Parser();
  return {
    definitions(path, source) {
      const id = grammarOf(path);
      const grammar = id ? loaded.get(id) : undefined;
      if (!grammar?.query || tooBigToParse(source)) return null;
      parser.setLanguage(grammar.language);
      parser.reset();
      const deadline = performance.now() + PARSE_BUDGET_MS;
      let tree: ReturnType<typeof parser.parse>;
      try {
        tree = parser.parse(source, null, { progressCallback: () => performance.now() > deadline });
      } catch {
        return null;
      }
      if (!tree) return null;
      try {
        return collect(grammar.query, tree.rootNode, source);
      } finally {
        tree.delete();
      }
    },
    dispose() {
      parser.delete();
    },
  };
}

/** The definitions of one file (loads its grammar if need be); null when it has none. */
export async function parseDefinitions(path: string, source: string): Promise<Definition[] | null> {
  const parser = await createDefinitionParser([path]);
  try {
    return parser.definitions(path, source);
  } finally {
    parser.dispose();
  }
}

function collect(query: Query, root: Node, source: string): Definition[] {
  const lines = source.split('\n');
  const seen = new Map<number, { def: Definition; pattern: number }>();
  for (const match of query.matches(root)) {
    let defNode: Node | undefined;
    let kind = '';
    let nameNode: Node | undefined;
    for (const c of match.captures) {
      if (c.name === 'name') nameNode = c.node;
      else if (c.name.startsWith('def.')) {
        defNode = c.node;
        kind = c.name.slice(4);
      }
    }
    if (!defNode || !nameNode) continue;
    const prev = seen.get(defNode.startIndex);
    if (prev && prev.pattern <= match.patternIndex) continue;
    let name = nameNode.text;
    if (kind === 'impl' || /::|</.test(name)) name = lastSegment(name);
    name = name.replace(/^#/, '');
    if (!/^[A-Za-z_$][\w$]*[?!=]?$/.test(name)) continue;
    if (kind === 'type') {
      const t = defNode.childForFieldName('type')?.type;
      if (t === 'struct_type') kind = 'struct';
      else if (t === 'interface_type') kind = 'interface';
    }
    let start = defNode;
    if (start.parent?.type === 'decorated_definition') start = start.parent;
    const container =
      kind === 'method' && defNode.type === 'method_declaration' && defNode.childForFieldName('receiver')
        ? goReceiver(defNode)
        : undefined;
    seen.set(defNode.startIndex, {
      pattern: match.patternIndex,
      def: {
        name,
        kind,
        startLine: start.startPosition.row + 1,
        endLine:
          defNode.endPosition.row +
          1 -
          (defNode.endPosition.column === 0 && defNode.endPosition.row > defNode.startPosition.row ? 1 : 0),
        headerEnd: headerEndRow(defNode, lines) + 1,
        ...(container ? { container } : {}),
      },
    });
  }
  const defs = [...seen.values()].map((s) => s.def).sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine);
  // Containers by nesting: a function inside a class (impl, trait...) is its method.
  const stack: Definition[] = [];
  for (const d of defs) {
    while (stack.length && stack[stack.length - 1]!.endLine < d.startLine) stack.pop();
    const parent = [...stack].reverse().find((p) => CONTAINERS.has(p.kind));
    const direct = stack[stack.length - 1];
    if (parent && !d.container && (!direct || direct === parent)) d.container = parent.name;
    if (d.kind === 'function' && direct && CONTAINERS.has(direct.kind)) d.kind = 'method';
    stack.push(d);
  }
  return defs;
}

/** Where a parse went wrong: an ERROR node, or a node the grammar needed and the text lacks. */
export interface ParseProblem {
  /** 1-based, inclusive. */
  line: number;
  endLine: number;
  what: string;
}

/**
 * The syntax errors tree-sitter finds in a file (at most `max`), [] when it parses clean, or null
 * when its language has no grammar here or it is too big to parse.
 */
export async function syntaxErrors(path: string, source: string, max = 3): Promise<ParseProblem[] | null> {
  return withTree(path, source, (root) => {
    const found: ParseProblem[] = [];
    // The innermost ERROR: an outer one often spans from the file's start to past the slip.
    const walk = (node: Node): void => {
      if (found.length >= max || (!node.hasError && !node.isMissing)) return;
      const inner = node.children.filter((c): c is Node => c !== null && (c.hasError || c.isMissing));
      if ((node.isError && inner.length === 0) || node.isMissing) {
        const what = node.isMissing ? `missing ${node.type}` : 'unexpected text';
        found.push({ line: node.startPosition.row + 1, endLine: node.endPosition.row + 1, what });
        return;
      }
      for (const child of inner) walk(child);
      if (node.isError && found.length === 0)
        found.push({ line: node.startPosition.row + 1, endLine: node.endPosition.row + 1, what: 'unexpected text' });
    };
    walk(root);
    return found;
  });
}

/**
 * Parses one file with its language's grammar and hands the tree's root to `use`; null when the
 * language has no grammar here or the file is too big (or, given `budgetMs`, the parse took longer).
 */
async function withTree<T>(path: string, source: string, use: (root: Node) => T, budgetMs?: number): Promise<T | null> {
  const id = grammarOf(path);
  if (!id || tooBigToParse(source)) return null;
  const rt = await loadRuntime();
  const grammar = await loadGrammar(rt, id);
  if (!grammar) return null;
  const parser = new rt.Parser();
  try {
    parser.setLanguage(grammar.language);
    const deadline = performance.now() + (budgetMs ?? 0);
    const options = budgetMs === undefined ? undefined : { progressCallback: () => performance.now() > deadline };
    const tree = parser.parse(source, null, options);
    if (!tree) return null;
    try {
      return use(tree.rootNode);
    } finally {
      tree.delete();
    }
  } finally {
    parser.delete();
  }
}

/** A call whose first argument is a literal string: `it('title', …)`, `test.concurrent("title", …)`. */
export interface TitledCall {
  /** The callee's first name: `it` of `it.concurrent(…)`. */
  callee: string;
  /** The literal's text, escapes undone; a template with substitutions is no title. */
  title: string;
  /** 1-based, inclusive: the whole call. */
  startLine: number;
  endLine: number;
}

const JS_GRAMMARS = new Set<GrammarId>(['javascript', 'typescript', 'tsx']);

/**
 * The titled calls of a JavaScript or TypeScript file, outermost first (the validator finds a
 * test's lines by them); null when the file is no such file, too big, or does not parse in time.
 */
export async function titledCalls(path: string, source: string): Promise<TitledCall[] | null> {
  const id = grammarOf(path);
  if (!id || !JS_GRAMMARS.has(id)) return null;
  const collect = (root: Node): TitledCall[] => {
    const calls: TitledCall[] = [];
    // An explicit stack: a deeply nested file must not exhaust the call stack.
    const stack: Node[] = [root];
    while (stack.length) {
      const node = stack.pop()!;
      const call = node.type === 'call_expression' ? titledCall(node) : null;
      if (call) calls.push(call);
      for (let i = node.namedChildCount - 1; i >= 0; i--) {
        const child = node.namedChild(i);
        if (child) stack.push(child);
      }
    }
    return calls;
  };
  // A parse the deadline cuts short is no answer, not an error.
  return withTree(path, source, collect, PARSE_BUDGET_MS).catch(() => null);
}

function titledCall(node: Node): TitledCall | null {
  let callee = node.childForFieldName('function');
  while (callee?.type === 'member_expression') callee = callee.childForFieldName('object');
  const arg = node.childForFieldName('arguments')?.namedChild(0);
  if (callee?.type !== 'identifier' || !arg) return null;
  const literal =
    arg.type === 'string' ||
    (arg.type === 'template_string' && !arg.namedChildren.some((c) => c?.type === 'template_substitution'));
  if (!literal) return null;
  return {
    callee: callee.text,
    title: arg.text.slice(1, -1).replace(/\\(.)/g, '$1'),
    startLine: node.startPosition.row + 1,
    endLine: node.endPosition.row + 1,
  };
}
