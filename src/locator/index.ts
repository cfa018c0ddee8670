import { buildBm25 } from './bm25.js';
import { INDEX_VERSION, cacheKey, loadCachedIndex, saveCachedIndex } from './cache.js';
import { MAX_FILE_BYTES, listCandidateFiles, repoFiles } from './files.js';
import { generatedBy } from './generated.js';
import { projectNames } from './project-name.js';
import { ModuleResolver, pythonImports } from './imports.js';
import { JsResolver, isJsFile, jsImports } from './js-imports.js';
import { type FileDefinition, type LocatorIndex, type RankedFile, rank } from './rank.js';
import { definitionsOf } from './symbols.js';
import { createDefinitionParser } from './treesitter.js';

export type { FileDefinition, RankedFile } from './rank.js';

export interface LocateOptions {
  /** How many files to return (default 10). */
  top?: number;
  /** Where indexes are cached per commit; without one, the index is built every call. */
  cacheDir?: string;
  /** After the first N files, the modules the best-ranked files import take turns with the rest (rank). */
  importsAfter?: number;
}

export interface LocateTimings {
  /**
   * `hit`: loaded from the cache; `miss`: built and saved; `off`: built, not cached (no cache dir, or a dirty tree).
   */
  cache: 'hit' | 'miss' | 'off';
  /** Whether this call built the index. */
  built: boolean;
  files: number;
  index_ms: number;
  rank_ms: number;
  total_ms: number;
}

export interface LocateResult {
  files: RankedFile[];
  /** The definitions the index holds for each ranked file: an outline without reading it again. */
  definitions: Record<string, FileDefinition[]>;
  timings: LocateTimings;
}

/**
 * Lists, reads and indexes the repository's candidate files: BM25 documents and the definition
 * index (tree-sitter where the language has a grammar, the regex fallback elsewhere).
 */
export async function buildIndex(repoDir: string): Promise<LocatorIndex> {
  const paths = listCandidateFiles(repoDir);
  const repo = repoFiles(repoDir);
  const files: { path: string; content: string; symbols: string[] }[] = [];
  const symbols: Record<string, string[]> = Object.create(null);
  const defs: Record<string, FileDefinition[]> = Object.create(null);
  const imports: Record<string, string[]> = Object.create(null);
  const generated: Record<string, string> = Object.create(null);
  const siblings = new Set(paths.map((p) => p.slice(p.lastIndexOf('/') + 1)));
  const modules = new ModuleResolver(paths);
  const jsModules = new JsResolver(paths, (path) => repo.readText(path, { maxBytes: MAX_FILE_BYTES }));
  const parser = await createDefinitionParser(paths);
  try {
    for (const path of paths) {
      const content = repo.readText(path, { maxBytes: MAX_FILE_BYTES });
      if (content === undefined) continue;
      const found = definitionsOf(parser, path, content);
      const names = [...new Set(found.map((d) => d.name))];
      files.push({ path, content, symbols: names });
      const made = generatedBy(path, content, siblings);
      if (made) generated[path] = made;
      for (const name of names) {
        symbols[name] ??= [];
        symbols[name].push(path);
      }
      if (found.length) defs[path] = found.map((d) => [d.name, d.kind, d.startLine, d.endLine, d.container ?? null]);
      const imported = path.endsWith('.py')
        ? pythonImports(path, content, modules)
        : isJsFile(path)
          ? jsImports(path, content, jsModules)
          : [];
      if (imported.length) imports[path] = imported;
    }
  } finally {
    parser.dispose();
  }
  return {
    version: INDEX_VERSION,
    bm25: buildBm25(files),
    symbols,
    defs,
    imports,
    generated,
    project: projectNames(repo),
  };
}

/**
 * The deterministic locator: ranks the repository's files for the prompt with BM25 over
 * code-aware tokens, boosts for files and symbols the prompt names or its stack traces show,
 * test files demoted unless the prompt is about tests. No model call. The index is cached per
 * commit under cacheDir when the checkout is clean.
 */
export async function locate(repoDir: string, prompt: string, options: LocateOptions = {}): Promise<LocateResult> {
  const start = performance.now();
  const key = options.cacheDir ? cacheKey(repoDir) : null;
  let index = options.cacheDir && key ? loadCachedIndex(options.cacheDir, key) : null;
  let cache: LocateTimings['cache'] = index ? 'hit' : 'off';
  const built = !index;
  if (!index) {
    index = await buildIndex(repoDir);
    if (options.cacheDir && key) {
      saveCachedIndex(options.cacheDir, key, index);
      cache = 'miss';
    }
  }
  const indexed = performance.now();
  const files = rank(index, prompt, options.top ?? 10, options.importsAfter);
  const end = performance.now();
  const ms = (x: number) => Math.round(x * 10) / 10;
  const definitions = Object.fromEntries(files.map((f) => [f.path, index.defs[f.path] ?? []]));
  return {
    files,
    definitions,
    timings: {
      cache,
      built,
      files: index.bm25.docs.length,
      index_ms: ms(indexed - start),
      rank_ms: ms(end - indexed),
      total_ms: ms(end - start),
    },
  };
}

/**
 * The index's definitions of some files of a checkout, extracted as buildIndex does, for a step
 * that needs real line ranges after the checkout changed (the cached index is per commit).
 */
export async function definitionsOfFiles(
  repoDir: string,
  paths: readonly string[],
): Promise<Record<string, FileDefinition[]>> {
  const repo = repoFiles(repoDir);
  const out: Record<string, FileDefinition[]> = Object.create(null);
  const parser = await createDefinitionParser(paths);
  try {
    for (const path of paths) {
      const content = repo.readText(path, { maxBytes: MAX_FILE_BYTES });
      if (content === undefined) continue;
      out[path] = definitionsOf(parser, path, content).map((d) => [
        d.name,
        d.kind,
        d.startLine,
        d.endLine,
        d.container ?? null,
      ]);
    }
  } finally {
    parser.dispose();
  }
  return out;
}
