// The repository's own Python imports, for the locator's import-graph signal: which of the
// repository's modules a file imports. Read with regular expressions over lines (no grammar
// needed: an import statement has one form), resolved the way Python resolves them.

/**
 * Resolves dotted module names to the repository's files. A module `a.b.c` is the file
 * `ROOT/a/b/c.py` or the package `ROOT/a/b/c/__init__.py` where ROOT is a source root: a directory
 * that is not itself a package (no `__init__.py`), as the repository top or `src/`. So `import os`
 * does not find a `pkg/os.py` inside a package, and `_pytest.main` finds `src/_pytest/main.py`.
 */
export class ModuleResolver {
  private readonly byModule = new Map<string, string[]>();

  constructor(paths: readonly string[]) {
    const all = new Set(paths);
    const isPackage = (dir: string) => all.has(dir ? `${dir}/__init__.py` : '__init__.py');
    for (const path of paths) {
      if (!path.endsWith('.py')) continue;
      const parts = path.slice(0, -3).split('/');
      if (parts[parts.length - 1] === '__init__') parts.pop();
      // Every split of the path into ROOT and module where ROOT is no package.
      for (let k = 0; k < parts.length; k++) {
        const root = parts.slice(0, k).join('/');
        if (isPackage(root)) continue;
        const name = parts.slice(k).join('.');
        if (!name) continue;
        this.byModule.set(name, [...(this.byModule.get(name) ?? []), path]);
      }
    }
  }

  /** The file of an absolute module name: one found under a single source root, else none. */
  resolve(name: string): string | undefined {
    const found = this.byModule.get(name);
    return found?.length === 1 ? found[0] : undefined;
  }
}

/** The dotted package a file is in (`pkg.sub` for `src/pkg/sub/mod.py`), as its relative imports count from. */
function packageOf(path: string, resolver: ModuleResolver): string | undefined {
  const dirs = path.split('/').slice(0, -1);
  for (let k = 0; k <= dirs.length; k++) {
    const name = dirs.slice(k).join('.');
    if (name && resolver.resolve(name) === `${dirs.join('/')}/__init__.py`) return name;
  }
  return undefined;
}

/** `..sub` from package `pkg.a` is `pkg.sub`; undefined when it climbs out of the top package. */
function absolute(module: string, pkg: string | undefined): string | undefined {
  const dots = /^\.*/.exec(module)![0].length;
  if (dots === 0) return module;
  if (!pkg) return undefined;
  const base = pkg.split('.');
  if (dots - 1 >= base.length) return undefined;
  const rest = module.slice(dots);
  return [...base.slice(0, base.length - (dots - 1)), ...(rest ? [rest] : [])].join('.');
}

/**
 * The repository files a Python file imports: `import a.b`, `from a.b import c` (the module `a.b`,
 * and `a.b.c` when c is a submodule), relative imports (`from .c import d`, `from .. import e`).
 * Imports of other projects (the standard library, dependencies) resolve to nothing.
 */
export function pythonImports(path: string, content: string, resolver: ModuleResolver): string[] {
  const out = new Set<string>();
  const pkg = packageOf(path, resolver);
  const add = (module: string | undefined) => {
    const file = module ? resolver.resolve(module) : undefined;
    if (file && file !== path) out.add(file);
  };
  for (const m of content.matchAll(/^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)/gm)) {
    const module = absolute(m[1]!, pkg);
    if (!module) continue;
    add(module);
    for (const name of m[2]!.replace(/[()]/g, '').split(',')) {
      const first = name.trim().split(/\s+/)[0] ?? '';
      if (/^[A-Za-z_]\w*$/.test(first)) add(`${module}.${first}`);
    }
  }
  for (const m of content.matchAll(/^[ \t]*import[ \t]+([^\n#;]+)/gm)) {
    for (const name of m[1]!.split(',')) add(name.trim().split(/\s+/)[0]);
  }
  return [...out];
}
