import { dirOf } from './paths.js';
// The repository's own JavaScript/TypeScript imports, for the locator's import-graph signal (as
// imports.ts is for Python): which of the repository's files a file imports. Read with regular
// expressions (an import names its module in a string literal after `from`, `import`, `import(`
// or `require(`), resolved the way Node and TypeScript resolve them: relative paths with the
// extension left out or written `.js` for a `.ts` file, a directory's `index` file,
// tsconfig/jsconfig `compilerOptions.paths` and `baseUrl`, and the workspace's own packages by
// their package.json name. Other projects' modules (dependencies, Node's) resolve to nothing.

const JS_FILE = /\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)$/;
export const isJsFile = (path: string) => JS_FILE.test(path);

/** What an extensionless specifier may be, in TypeScript's order, then JavaScript's. */
const EXTENSIONS = ['.ts', '.tsx', '.d.ts', '.js', '.jsx', '.mjs', '.cjs', '.mts', '.cts'];
/** TypeScript's ESM convention: `./a.js` is written for `a.ts` (and `.jsx` for `.tsx`...). */
const WRITTEN_FOR: Record<string, string[]> = {
  '.js': ['.ts', '.tsx', '.d.ts'],
  '.jsx': ['.tsx'],
  '.mjs': ['.mts', '.d.mts'],
  '.cjs': ['.cts', '.d.cts'],
};

/** `a/./b/../c` → `a/c`; undefined when it climbs out of the repository. */
function normalize(path: string): string | undefined {
  const out: string[] = [];
  for (const part of path.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') {
      if (out.length === 0) return undefined;
      out.pop();
    } else out.push(part);
  }
  return out.join('/');
}

const join = (dir: string, rest: string) => normalize(dir ? `${dir}/${rest}` : rest);

/** JSON with comments and trailing commas (tsconfig.json, jsconfig.json); undefined when it does not parse. */
export function parseJsonc(text: string): unknown {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = /"(?:[^"\\\n]|\\.)*"/y;
      end.lastIndex = i;
      const m = end.exec(text);
      if (!m) return undefined;
      out += m[0];
      i += m[0].length - 1;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      i = close < 0 ? text.length : close + 1;
    } else out += c;
  }
  try {
    return JSON.parse(out.replace(/,(\s*[}\]])/g, '$1'));
  } catch {
    return undefined;
  }
}

interface PathAliases {
  /** The directory the config is in: it applies to the files under it. */
  dir: string;
  /** Where non-relative specifiers are also looked up (compilerOptions.baseUrl), repository-relative. */
  baseUrl?: string;
  /** pattern → targets, repository-relative (`@app/*` → [`src/app/*`]). */
  paths: [pattern: string, targets: string[]][];
}

const record = (x: unknown): Record<string, unknown> | undefined =>
  x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;

/**
 * Resolves the module specifiers of JavaScript/TypeScript files to the repository's files. Built
 * once per index from the candidate paths and a reader for the configuration files (tsconfig.json,
 * jsconfig.json, package.json) among them.
 */
export class JsResolver {
  private readonly files: Set<string>;
  private readonly configs: PathAliases[] = [];
  /** A workspace package's name → its directory and the entry files its package.json names. */
  private readonly packages = new Map<string, { dir: string; entries: string[] }>();

  constructor(paths: readonly string[], read: (path: string) => string | undefined) {
    this.files = new Set(paths);
    for (const path of paths) {
      const name = path.slice(path.lastIndexOf('/') + 1);
      if (name === 'tsconfig.json' || name === 'jsconfig.json') {
        const aliases = this.readConfig(path, read);
        if (aliases) this.configs.push(aliases);
      } else if (name === 'package.json') {
        const pkg = record(parseJsonc(read(path) ?? ''));
        const dir = dirOf(path);
        if (typeof pkg?.name !== 'string' || this.packages.has(pkg.name)) continue;
        const entries = ['source', 'types', 'typings', 'module', 'main']
          .map((field) => pkg[field])
          .filter((v): v is string => typeof v === 'string');
        this.packages.set(pkg.name, { dir, entries });
      }
    }
    // The deepest config first: a file follows the nearest one above it.
    this.configs.sort((a, b) => b.dir.split('/').length - a.dir.split('/').length || b.dir.length - a.dir.length);
  }

  /** A config's baseUrl and paths, `extends` followed (relative paths only; a package's config is not ours). */
  private readConfig(path: string, read: (path: string) => string | undefined, depth = 0): PathAliases | undefined {
    const config = record(parseJsonc(read(path) ?? ''));
    if (!config) return undefined;
    const dir = dirOf(path);
    let inherited: PathAliases | undefined;
    if (typeof config.extends === 'string' && config.extends.startsWith('.') && depth < 5) {
      let parent = join(dir, config.extends);
      if (parent && !parent.endsWith('.json')) parent += '.json';
      if (parent && this.files.has(parent)) inherited = this.readConfig(parent, read, depth + 1);
    }
    const options = record(config.compilerOptions) ?? {};
    const baseUrl = typeof options.baseUrl === 'string' ? join(dir, options.baseUrl) : inherited?.baseUrl;
    let paths = inherited?.paths ?? [];
    const own = record(options.paths);
    if (own) {
      // Paths are relative to baseUrl, else (TypeScript 4.1 and later) to the config that sets them.
      const root = typeof options.baseUrl === 'string' ? baseUrl! : dir;
      paths = Object.entries(own).map(([pattern, targets]) => [
        pattern,
        (Array.isArray(targets) ? targets : [])
          .filter((t): t is string => typeof t === 'string')
          .map((t) => join(root, t))
          .filter((t): t is string => t !== undefined),
      ]);
    }
    if (baseUrl === undefined && paths.length === 0) return undefined;
    return { dir, baseUrl, paths };
  }

  /** The repository file a specifier names from a file: one file or none. */
  resolve(from: string, specifier: string): string | undefined {
    const spec = specifier.replace(/[?#].*$/, '');
    if (!spec || spec.startsWith('/') || /^[a-z][\w+.-]*:/i.test(spec)) return undefined; // absolute, node:, https:
    if (spec.startsWith('./') || spec.startsWith('../') || spec === '.' || spec === '..') {
      const target = join(dirOf(from), spec);
      return target === undefined ? undefined : this.file(target);
    }
    const config = this.configs.find((c) => c.dir === '' || from.startsWith(`${c.dir}/`));
    if (config) {
      for (const target of this.aliasTargets(config, spec)) {
        const found = this.file(target);
        if (found) return found;
      }
      if (config.baseUrl !== undefined) {
        const target = join(config.baseUrl, spec);
        const found = target === undefined ? undefined : this.file(target);
        if (found) return found;
      }
    }
    return this.workspacePackage(spec);
  }

  /** The targets of the paths pattern that matches the specifier with the longest prefix, `*` replaced. */
  private aliasTargets(config: PathAliases, spec: string): string[] {
    let best: { prefix: number; targets: string[] } | undefined;
    for (const [pattern, targets] of config.paths) {
      const star = pattern.indexOf('*');
      if (star < 0) {
        if (pattern === spec && (!best || pattern.length > best.prefix)) best = { prefix: pattern.length, targets };
        continue;
      }
      const prefix = pattern.slice(0, star);
      const suffix = pattern.slice(star + 1);
      if (!spec.startsWith(prefix) || !spec.endsWith(suffix) || spec.length < prefix.length + suffix.length) continue;
      if (best && prefix.length <= best.prefix) continue;
      const matched = spec.slice(prefix.length, spec.length - suffix.length);
      best = { prefix: prefix.length, targets: targets.map((t) => t.replace('*', matched)) };
    }
    return best?.targets ?? [];
  }

  /** `@scope/pkg` or `@scope/pkg/sub` of a package in this repository (a workspace): its entry, or the file under it. */
  private workspacePackage(spec: string): string | undefined {
    const parts = spec.split('/');
    const nameLength = spec.startsWith('@') ? 2 : 1;
    const pkg = this.packages.get(parts.slice(0, nameLength).join('/'));
    if (!pkg) return undefined;
    const rest = parts.slice(nameLength).join('/');
    // A subpath under the package, or under its src/ (built to the package's top); the entry package.json names,
    // else the one its build is usually made from: src/index, index.
    const tries = rest ? [rest, `src/${rest}`] : [...pkg.entries, 'src/index', 'index'];
    for (const t of tries) {
      const target = join(pkg.dir, t);
      const found = target === undefined ? undefined : this.file(target);
      if (found) return found;
    }
    return undefined;
  }

  /** A target path as a file: itself, a `.ts` file it was written for, with an extension, or its directory's index. */
  private file(target: string): string | undefined {
    const ext = /\.[cm]?[jt]sx?$/.exec(target)?.[0];
    if (ext && this.files.has(target) && JS_FILE.test(target)) return target;
    if (ext && WRITTEN_FOR[ext]) {
      const stem = target.slice(0, -ext.length);
      for (const e of WRITTEN_FOR[ext]) if (this.files.has(stem + e)) return stem + e;
    }
    if (this.files.has(target) && /\.(json|vue|svelte)$/.test(target)) return target;
    for (const e of EXTENSIONS) if (this.files.has(target + e)) return target + e;
    for (const e of EXTENSIONS) if (this.files.has(`${target}/index${e}`)) return `${target}/index${e}`;
    return undefined;
  }
}

/**
 * The module specifiers a file names: `import … from 'm'`, `export … from 'm'` (re-exports),
 * `import 'm'`, `import('m')`, `require('m')` (and TypeScript's `import x = require('m')`).
 */
export function jsImportSpecifiers(content: string): string[] {
  const out = new Set<string>();
  const patterns = [
    /\b(?:import|export)\b[^;'"`]*?\bfrom\s*(['"])([^'"\n]+)\1/g,
    /(?:^|[;\n}])\s*import\s*(['"])([^'"\n]+)\1/g,
    /\bimport\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
    /\brequire\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g,
  ];
  for (const re of patterns) for (const m of content.matchAll(re)) out.add(m[2]!);
  return [...out];
}

/** The repository files a JavaScript/TypeScript file imports, each once, itself left out. */
export function jsImports(path: string, content: string, resolver: JsResolver): string[] {
  const out = new Set<string>();
  for (const spec of jsImportSpecifiers(content)) {
    const file = resolver.resolve(path, spec);
    if (file && file !== path) out.add(file);
  }
  return [...out];
}
