import { familyMatches, familyNames, reportNames, siblingsOfTitleNames } from './family-names.js';
import { type Bm25Index, own, scoreBm25, topTerms } from './bm25.js';
import { withoutDependencyListings } from './prompt-noise.js';
import { tokenize } from './tokenize.js';
import { titleNamedDirectories, titleNamedFiles } from './title-names.js';
import { testedFiles } from './tested-by.js';
import { isTestOrSupportFile } from '../text/test-paths.js';

export interface LocatorIndex {
  version: number;
  bm25: Bm25Index;
  /** symbol name → paths of the files that define it */
  symbols: Record<string, string[]>;
  /** path → its definitions */
  defs: Record<string, FileDefinition[]>;
  /** path → the repository files it imports (Python, JavaScript/TypeScript) */
  imports: Record<string, string[]>;
  /** path → why it is a build's output (src/locator/generated.ts) */
  generated: Record<string, string>;
  /** the names the project's manifests declare (src/locator/project-name.ts) */
  project: string[];
}

/** A definition in the index: name, kind, first and last line (1-based), container (class, impl...) or null. */
export type FileDefinition = [name: string, kind: string, startLine: number, endLine: number, container: string | null];

export interface RankedFile {
  path: string;
  score: number;
  reasons: string[];
}

// Weights on top of the BM25 score, which is scaled so the best file scores 1.
const STACK_FRAME = 3;
/** Extra for the innermost frame of a trace that is in the repository: where the error surfaced. */
const INNERMOST_FRAME = 0.5;
const PATH_MENTION = 2;
/** A package (`__init__.py`) or a non-source file (configuration, data) named in the prompt: often the user's own. */
const WEAK_PATH_MENTION = 0.6;
const QUALIFIED_MENTION = 1.2;
const SYMBOL_MENTION = 1;
const SYMBOL_CAP = 1.5;
const STEM_MENTION = 0.3;
/** A file whose name's telling words are all in the title (title-names.ts). */
const TITLE_NAME_WORDS = 0.4;
/** A file in a directory whose name's telling words are all in the title: less, its siblings share it. */
const TITLE_DIR_WORDS = 0.25;
/**
 * A source file gains this share of what its test file matches beyond the file itself (tested-by.ts): a test
 * says in words what its module does (`it('should not serialize waypoints')`), as a report of a behaviour does.
 */
const TESTED_BY = 0.75;
/** A file of a family (one file per language, rule, locale) filed under a name the report uses, in its title. */
const FAMILY_NAME = 1;
/** Another member of a family the title names a member of (siblingsOfTitleNames): its matches are by chance. */
const SIBLING_DEMOTION = 0.6;
/**
 * A file the title alone matches best. The title is the report's one-line summary: in a long report (logs, listings,
 * the user's own code) its few terms are a small share of the query, so the files matching many incidental terms
 * outrank the one matching what the report is about. A second BM25 pass over the title's terms alone, scaled so the
 * best file scores 1, restores that.
 */
const TITLE_MATCH = 0.75;
/** The modules imported by the best-ranked files gain this share of their own BM25 (scaled): importedByTopFiles. */
const IMPORTED_BY_TOP = 0.3;
const IMPORT_LEADERS = 3;
const TEST_DEMOTION = 0.3;
const DOC_DEMOTION = 0.5;
const AUX_DEMOTION = 0.6;
/** A file a build made from the sources (src/locator/generated.ts): a fix goes in the source, never in it. */
const GENERATED_DEMOTION = 0.3;
/**
 * TypeScript declaration files (`.d.ts`): types only, no code runs there. A package written in JavaScript with
 * hand-written types has one per module, matching the same words as the module, and a behaviour is fixed in the
 * module. Not demoted when the report is about the types themselves (isAboutTypes).
 */
const DECLARATION_DEMOTION = 0.6;
/**
 * Query term weights by where the term appears: the title says what the report is about; code blocks and logs are long
 * and noisy.
 */
const TITLE_WEIGHT = 2;
const PROSE_WEIGHT = 1;
const CODE_WEIGHT = 0.6;

const isDocPath = (path: string) =>
  /\.(md|rst|txt|adoc)$/i.test(path) || /(^|\/)(docs?|doc_src|changelog|changes)\//i.test(path);
/** Examples, benchmarks, CI and tooling; configuration and data files: rarely where a bug is fixed. */
const isAuxPath = (path: string) =>
  /(^|\/)(examples?|samples?|demos?|benchmarks?|asv_bench|bench|\.github|\.circleci|ci|scripts|tools|third_party|vendor(ed)?|_vendor|external)\//i.test(
    path,
  ) ||
  /\.(json|ya?ml|toml|cfg|ini|xml|html|css|scss|sql|proto|graphql|gradle|cmake)$/i.test(path) ||
  /(^|\/)(Makefile|Dockerfile|CMakeLists\.txt|LICENSE|README|setup\.py|noxfile\.py|tox\.ini)$/.test(path) ||
  // Configuration written as code: `jest.config.js`, `karma.sauce.conf.js`, `.eslintrc.cjs`, `Gruntfile.js`.
  /(^|\/)[^/]+\.(config|conf)\.[cm]?[jt]s$|(^|\/)\.\w+rc\.[cm]?[jt]s$|(^|\/)(Gruntfile|gulpfile)\.[cm]?[jt]s$/i.test(
    path,
  );

const isDeclarationPath = (path: string) => /\.d\.[cm]?ts$/.test(path);
/** Whether the report is about type declarations: typings, type definitions, a `.d.ts` file. */
export const promptAboutTypes = (prompt: string) =>
  /\b(typings?|type (definitions?|declarations?)|declaration files?|types? (is|are) (wrong|missing|incorrect))\b|\.d\.ts\b/i.test(
    prompt,
  );

/**
 * Whether the prompt is about the tests themselves (then test files are not demoted): it asks to
 * add, fix or change tests, or speaks of coverage or flaky tests. A bug report that merely says
 * "my test fails" is not.
 */
export const promptAboutTests = (prompt: string) =>
  /\b(add|adds|adding|write|writing|missing|fix|fixing|update|updating|improve|rewrite|extend|more|new)\s+(a\s+|the\s+|some\s+|unit\s+|regression\s+|integration\s+)*(unit\s+|regression\s+)?(tests?|test[ _-]?cases?|test[ _-]?suites?|specs?)\b/i.test(
    prompt,
  ) ||
  /\b(test coverage|flaky tests?|tests? (is|are) (flaky|broken|missing|wrong)|test suite (fails|is failing|is broken))\b/i.test(
    prompt,
  );

const SOURCE_EXT = 'py|pyi|js|jsx|mjs|cjs|ts|tsx|mts|cts|go|rs|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|swift|sh|lua';
const SOURCE_FILE = new RegExp(`\\.(${SOURCE_EXT})$`, 'i');

export interface StackFrame {
  file: string;
  line: number;
}

/** File/line pairs of stack-trace frames: Python, Node/JS, and the `file.ext:LINE` form of Go, Rust, compilers. */
export function stackFrames(prompt: string): StackFrame[] {
  const frames: { at: number; frame: StackFrame }[] = [];
  for (const m of prompt.matchAll(/File "([^"\n]+)", line (\d+)/g))
    frames.push({ at: m.index, frame: { file: m[1]!, line: Number(m[2]) } });
  const colon = new RegExp(`((?:[A-Za-z]:)?[\\w.@~+/\\\\-]*[\\w-]\\.(?:${SOURCE_EXT})):(\\d+)(?::\\d+)?`, 'g');
  for (const m of prompt.matchAll(colon))
    frames.push({ at: m.index, frame: { file: m[1]!.replace(/^file:\/\//, ''), line: Number(m[2]) } });
  // IPython and Jupyter: `PATH in function(args)`, then `--> LINE` on a following line.
  const ipython = new RegExp(`^\\s*((?:[A-Za-z]:)?[\\w.@~+/\\\\-]*[\\w-]\\.(?:${SOURCE_EXT})) in [\\w<>.]+`, 'gm');
  for (const m of prompt.matchAll(ipython)) {
    const line = /^-+>\s*(\d+)/m.exec(prompt.slice(m.index + m[0].length, m.index + m[0].length + 2000));
    frames.push({ at: m.index, frame: { file: m[1]!, line: line ? Number(line[1]) : 0 } });
  }
  return frames.sort((a, b) => a.at - b.at).map((f) => f.frame);
}

/**
 * The candidate files a mentioned path refers to, by the longest common tail of path
 * components: a candidate the mention ends with (an absolute path of a checkout or an installed
 * copy), one that ends with the mention, or one sharing at least its last directory and file
 * name (`site-packages/pkg/mod.py` for `src/pkg/mod.py`). The longest tail wins. A bare file
 * name that several files share refers to none of them: it is more likely the user's own file.
 * forwardOnly: the candidate must end with the whole mention (a module path).
 */
function resolveMention(mention: string, byBase: Map<string, string[]>, forwardOnly = false): string[] {
  const clean = mention.replace(/\\/g, '/').replace(/^\.?\//, '');
  const parts = clean.split('/').filter((p) => p && p !== '.');
  const base = parts[parts.length - 1] ?? '';
  const candidates = byBase.get(base) ?? [];
  const tail = (p: string) => {
    const a = p.split('/');
    let n = 0;
    while (n < a.length && n < parts.length && a[a.length - 1 - n] === parts[parts.length - 1 - n]) n++;
    return { n, whole: n === a.length };
  };
  const scored = candidates
    .map((p) => ({ p, ...tail(p) }))
    .filter((c) => c.n === parts.length || (!forwardOnly && (c.whole || c.n >= 2)));
  if (parts.length === 1) return scored.length === 1 ? [scored[0]!.p] : [];
  if (scored.length === 0) return [];
  const best = Math.max(...scored.map((c) => c.n));
  const top = scored.filter((c) => c.n === best).map((c) => c.p);
  return best >= 2 || top.length === 1 ? top : [];
}

/**
 * The prompt split into its title (first line), prose, and code (fenced blocks, indented blocks, traceback and log
 * lines).
 */
export function promptParts(prompt: string): { title: string; prose: string; code: string } {
  const lines = prompt.replace(/\r/g, '').split('\n');
  const title = lines[0] ?? '';
  const prose: string[] = [];
  const code: string[] = [];
  let fenced = false;
  for (const line of lines.slice(1)) {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      continue;
    }
    if (
      fenced ||
      /^( {4}|\t)/.test(line) ||
      /^\s*(>>>|\$ |File "|Traceback|at |[A-Z]\w*(Error|Exception)\b)/.test(line)
    )
      code.push(line);
    else prose.push(line);
  }
  return { title, prose: prose.join('\n'), code: code.join('\n') };
}

/**
 * The tokens of a part of the report as query terms, with two changes from the index's tokens:
 *
 * - numbers go: a report's numbers are versions (`pytest 6.0.0rc0`, `python3.9`), line numbers, counts and values,
 *   and the small numbers of code (`0`, `1`, `2`) are in nearly every file, so they match files at random;
 *   identifiers holding digits (`python3`, `F0010`, `md5`) are kept whole;
 * - a kebab-case word (`--import-mode`, `ignore-paths`, `max-line-length`) also gives its snake_case and joined
 *   forms: command-line options and configuration keys are spelled with hyphens, the code that reads them names
 *   them `import_mode` or `importmode`, and the parts alone (`import`, `mode`) are common words.
 */
export function queryTokens(text: string): string[] {
  const out = tokenize(text).filter((t) => !/^\d+$/.test(t));
  for (const m of text.matchAll(/(?<!\w)[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z][A-Za-z0-9]*)+(?![\w-])/g)) {
    const snake = m[0].toLowerCase().replace(/-/g, '_');
    out.push(snake, snake.replace(/_/g, ''));
  }
  return out;
}

/** Query terms with weights: the largest weight of the parts a term appears in, a little more when it recurs. */
export function queryTerms(prompt: string): Map<string, number> {
  const { title, prose, code } = promptParts(prompt);
  const weights = new Map<string, number>();
  const counts = new Map<string, number>();
  for (const [text, w] of [
    [title, TITLE_WEIGHT],
    [prose, PROSE_WEIGHT],
    [code, CODE_WEIGHT],
  ] as const) {
    for (const t of queryTokens(text)) {
      weights.set(t, Math.max(weights.get(t) ?? 0, w));
      counts.set(t, (counts.get(t) ?? 0) + 1);
    }
  }
  for (const [t, w] of weights) weights.set(t, w * (1 + 0.2 * Math.log(counts.get(t)!)));
  return weights;
}

/** Names the prompt's own code defines (`def foo`, `class Bar`, `function baz`): the user's, not the repository's. */
function definedInPrompt(prompt: string): Set<string> {
  const names = new Set<string>();
  for (const m of prompt.matchAll(/\b(?:def|class|function|func|fn|interface|struct)\s+([A-Za-z_$][\w$]*)/g))
    names.add(m[1]!);
  return names;
}

interface PromptIdentifier {
  codeLike: boolean;
  /** `Container.name` forms the prompt uses for it */
  qualifiers: Set<string>;
}

/**
 * Identifiers in the prompt with whether they look like code (snake_case, camelCase, in
 * backticks, called, dotted) and the names they are qualified with (`Session.send`). The
 * members of a dotted path rooted outside the repository (`os.path.join`, `np.testing.x`)
 * are left out: they name another project's code.
 */
function promptIdentifiers(prompt: string, repoNames: Set<string>): Map<string, PromptIdentifier> {
  const ids = new Map<string, PromptIdentifier>();
  const codeSpans = new Set<string>();
  for (const m of prompt.matchAll(/`([^`\n]+)`/g)) for (const w of m[1]!.match(/[A-Za-z_]\w*/g) ?? []) codeSpans.add(w);
  for (const m of prompt.matchAll(/(?<![\w.])((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)(\s*\()?/g)) {
    let parts = m[1]!.split('.');
    const root = parts[0]!;
    if (
      parts.length >= 3 &&
      !repoNames.has(root.toLowerCase()) &&
      !/^(self|cls|this)$/.test(root) &&
      /^[a-z_]/.test(parts[1]!)
    )
      continue;
    if (
      parts.length >= 2 &&
      !repoNames.has(root.toLowerCase()) &&
      /^[a-z]/.test(root) &&
      !/^(self|cls|this)$/.test(root)
    )
      parts = parts.slice(1); // a variable: its members count
    parts.forEach((w, k) => {
      if (w.length < 3) return;
      const codeLike =
        /_/.test(w.slice(1)) ||
        /[a-z][A-Z]/.test(w) ||
        /^[A-Z][a-z]+[A-Z]/.test(w) ||
        codeSpans.has(w) ||
        parts.length > 1 ||
        (m[2] !== undefined && k === parts.length - 1);
      const id = ids.get(w) ?? { codeLike: false, qualifiers: new Set<string>() };
      id.codeLike ||= codeLike;
      if (k > 0) id.qualifiers.add(parts[k - 1]!);
      ids.set(w, id);
    });
  }
  return ids;
}

/** BM25 of the title's terms alone, each once, scaled so the best file scores 1 (all 0 for a title of one term). */
function titleMatch(index: LocatorIndex, title: string): { scores: Float64Array; terms: string[] } {
  const terms = new Set(queryTokens(title));
  if (terms.size < 2) return { scores: new Float64Array(index.bm25.docs.length), terms: [] };
  const { scores } = scoreBm25(index.bm25, new Map([...terms].map((t) => [t, 1])));
  const max = Math.max(0, ...scores);
  if (max > 0) for (let i = 0; i < scores.length; i++) scores[i]! /= max;
  return { scores, terms: [...terms] };
}

/**
 * Ranks the indexed files for the prompt, at most `top`: BM25, then boosts for what the prompt
 * names, then the demotions. With `importsAfter` (N), the files after the first N are the modules
 * the best-ranked files import (importedByTopFiles' leaders) taking turns with the rest of the
 * ranking: what the code a report points to calls is where its bug is often fixed, even when the
 * report's words do not match it (a module of constants, a utility file).
 */
export function rank(index: LocatorIndex, report: string, top: number, importsAfter?: number): RankedFile[] {
  const prompt = withoutDependencyListings(report);
  const docs = index.bm25.docs;
  const paths = docs.map((d) => d.path);
  // The prompt's title, prose and code, split once for the rules below that read them.
  const parts = promptParts(prompt);
  const { scores, terms } = scoreBm25(index.bm25, queryTerms(prompt));
  const maxBm25 = Math.max(0, ...scores);
  const byPath = new Map<string, number>();
  const byBase = new Map<string, string[]>();
  const repoNames = new Set<string>();
  docs.forEach((d, i) => {
    byPath.set(d.path, i);
    const base = d.path.slice(d.path.lastIndexOf('/') + 1);
    byBase.set(base, [...(byBase.get(base) ?? []), d.path]);
    for (const part of d.path.split('/')) repoNames.add(part.replace(/\.[^.]*$/, '').toLowerCase());
  });
  const aboutTests = promptAboutTests(prompt);
  const aboutTypes = promptAboutTypes(prompt);
  const demotion = (path: string): [number, string] | null =>
    !aboutTests && isTestOrSupportFile(path)
      ? [TEST_DEMOTION, 'test file, demoted: the prompt is not about tests']
      : !aboutTypes && isDeclarationPath(path)
        ? [DECLARATION_DEMOTION, 'type declarations, demoted: the prompt is not about types']
        : index.generated[path] !== undefined
          ? [GENERATED_DEMOTION, `a build's output (${index.generated[path]}), demoted`]
          : isDocPath(path)
            ? isAuxPath(path)
              ? // An issue template, an example's readme: both kinds at once. A report written from the template
                // matches all of its boilerplate.
                [
                  DOC_DEMOTION * AUX_DEMOTION,
                  'documentation outside the library source (CI, examples, tooling), demoted',
                ]
              : [DOC_DEMOTION, 'documentation, demoted']
            : isAuxPath(path)
              ? [AUX_DEMOTION, 'not library source (example, tooling, configuration or data), demoted']
              : null;

  const base = Array.from(scores, (s) => (maxBm25 > 0 ? s / maxBm25 : 0));
  const title = titleMatch(index, parts.title);
  const strong = new Float64Array(docs.length); // explicit references
  const weak = new Float64Array(docs.length);
  const reasons: string[][] = docs.map(() => []);

  // Stack-trace frames; the innermost one in the repository counts a little more.
  const framed = new Map<number, number[]>();
  let innermost = -1;
  for (const f of stackFrames(prompt)) {
    for (const p of resolveMention(f.file, byBase)) {
      const i = byPath.get(p)!;
      framed.set(i, [...(framed.get(i) ?? []), f.line]);
      innermost = i;
    }
  }
  for (const [i, lines] of framed) {
    strong[i]! += STACK_FRAME + (i === innermost ? INNERMOST_FRAME : 0);
    reasons[i]!.push(
      `in a stack trace of the prompt ` +
        `(line${lines.length > 1 ? 's' : ''} ${[...new Set(lines)].join(', ')})${
          i === innermost ? ', the innermost frame in the repository' : ''
        }`,
    );
  }

  // Paths and dotted module names named in the prompt.
  const mentioned = new Set<number>();
  for (const m of prompt.matchAll(/[\w.@~+/\\-]*[\w-]\.[A-Za-z][A-Za-z0-9]{0,5}\b/g)) {
    const raw = m[0];
    const options: { path: string; forwardOnly: boolean }[] = [{ path: raw, forwardOnly: false }];
    // `requests.models` or `_pytest.python.Function`: a module path, as a file or a package.
    if (/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$/.test(raw)) {
      const parts = raw.split('.');
      for (let n = parts.length; n >= 2; n--) {
        const mod = parts.slice(0, n).join('/');
        options.push({ path: `${mod}.py`, forwardOnly: true }, { path: `${mod}/__init__.py`, forwardOnly: true });
      }
    }
    for (const option of options) {
      const hits = resolveMention(option.path, byBase, option.forwardOnly);
      if (hits.length === 0 || hits.length > 3) continue;
      for (const p of hits) {
        const i = byPath.get(p)!;
        if (framed.has(i) || mentioned.has(i)) continue;
        mentioned.add(i);
        const weakMention = /(^|\/)__init__\.py$/.test(p) || !SOURCE_FILE.test(p);
        if (weakMention) weak[i]! += WEAK_PATH_MENTION;
        else strong[i]! += PATH_MENTION;
        reasons[i]!.push(`named in the prompt as "${raw}"`);
      }
      break;
    }
  }

  // Symbols named in the prompt, from the definition index; a name defined in many files counts
  // less, a name the prompt's own code defines not at all, and `Container.member` where the
  // file defines member in Container counts more.
  const ownNames = definedInPrompt(prompt);
  const ids = promptIdentifiers(prompt, repoNames);
  const symbolBoost = new Float64Array(docs.length);
  const symbolNames: string[][] = docs.map(() => []);
  const qualified = new Map<number, Set<string>>();
  for (const [name, id] of ids) {
    if (ownNames.has(name)) continue;
    const defs = own(index.symbols, name);
    if (!defs || defs.length > 20) continue;
    const w = (id.codeLike ? SYMBOL_MENTION : SYMBOL_MENTION / 4) / Math.sqrt(defs.length);
    for (const p of defs) {
      const i = byPath.get(p);
      if (i === undefined) continue;
      symbolBoost[i]! += w;
      symbolNames[i]!.push(name);
      if (id.qualifiers.size === 0) continue;
      for (const d of own(index.defs, p) ?? []) {
        if (d[0] === name && d[4] && id.qualifiers.has(d[4]))
          qualified.set(i, (qualified.get(i) ?? new Set()).add(`${d[4]}.${name}`));
      }
    }
  }
  for (const [i, names] of qualified) {
    strong[i]! += QUALIFIED_MENTION;
    reasons[i]!.push(`defines ${[...names].slice(0, 3).join(', ')}, named in the prompt`);
  }
  symbolBoost.forEach((b, i) => {
    if (b <= 0) return;
    weak[i]! += Math.min(SYMBOL_CAP, b);
    reasons[i]!.push(
      `defines ${symbolNames[i]!.slice(0, 5).join(', ')}${symbolNames[i]!.length > 5 ? ', …' : ''}, named in ` +
        `the prompt`,
    );
  });

  // A file filed under a name the report uses (a language, a rule, a locale: family-names.ts).
  const families = familyNames(paths);
  const family = familyMatches(families, reportNames(parts));
  const siblings = siblingsOfTitleNames(families, parts.title, index.imports);
  const named = new Set<number>();
  for (const [path, hit] of family) {
    const i = byPath.get(path)!;
    // Evidence the words lack: a file their BM25 already ranks first gains nothing more from its name
    // (then the file-name rule below gives what it gives any file).
    const boost = FAMILY_NAME * hit.weight * (1 - Math.min(1, base[i]!));
    if (mentioned.has(i) || framed.has(i) || boost < STEM_MENTION) continue;
    named.add(i);
    strong[i]! += boost;
    reasons[i]!.push(`filed under "${hit.name}", a name the prompt uses`);
  }

  // A file whose name (without extension) is a word of the prompt; not the project's own name (a file or
  // directory at the repository's top: `prism.js`; the name its manifest declares: `marked`, `highlight.js`),
  // which nearly every report writes.
  const words = new Set(prompt.toLowerCase().match(/[a-z_][a-z0-9_]*/g) ?? []);
  const projectNames = new Set([
    ...docs.map((d) => d.path.split('/')[0]!.split('.')[0]!.toLowerCase()),
    ...index.project,
  ]);
  docs.forEach((d, i) => {
    if (mentioned.has(i) || framed.has(i) || named.has(i)) return;
    const stem = d.path
      .slice(d.path.lastIndexOf('/') + 1)
      .replace(/\.[^.]+$/, '')
      .toLowerCase();
    if (stem.length >= 4 && stem !== '__init__' && words.has(stem) && !projectNames.has(stem)) {
      weak[i]! += STEM_MENTION;
      reasons[i]!.push(`file name "${stem}" appears in the prompt`);
    }
  });

  const titleNamed = new Set<number>();
  // A file named with the title's words, one at a time (`SubProcessStartEventBehavior` for "… sub-process … start event").
  for (const [i, matched] of titleNamedFiles(paths, parts.title)) {
    if (mentioned.has(i) || framed.has(i) || named.has(i)) continue;
    weak[i]! += TITLE_NAME_WORDS;
    reasons[i]!.push(`named with the title's words (${matched.join(', ')})`);
    titleNamed.add(i);
  }
  // A file in a directory named with the title's words (`code-path-analysis/` for "Code path analysis …").
  for (const [i, matched] of titleNamedDirectories(paths, parts.title)) {
    if (mentioned.has(i) || framed.has(i) || named.has(i) || titleNamed.has(i)) continue;
    weak[i]! += TITLE_DIR_WORDS;
    reasons[i]!.push(`in a directory named with the title's words (${matched.join(', ')})`);
  }

  // A source file whose test matches the report better than the file itself: only the difference counts (a
  // module and its test share their identifiers), and the best of its tests (tested in two places is not
  // twice as likely).
  const matchOf = (i: number) => base[i]! + TITLE_MATCH * title.scores[i]!;
  const viaTest = new Map<number, { more: number; test: number }>();
  for (const [t, src] of testedFiles(paths)) {
    const more = matchOf(t) - matchOf(src);
    if (more > (viaTest.get(src)?.more ?? 0)) viaTest.set(src, { more, test: t });
  }
  for (const [src, { more, test }] of viaTest) {
    weak[src]! += TESTED_BY * more;
    reasons[src]!.push(`its test ${docs[test]!.path} matches the report better`);
  }

  const factor = docs.map((d) => demotion(d.path)?.[0] ?? 1);
  const total = docs.map((d, i) => {
    // The title's pass finds what a long report is about among the sources. Documentation, configuration, a
    // build's output repeat a title's words (an issue template, a package's keywords: "Comments aren't fully
    // supported" and marked's package.json) without being where the fix goes: their title match is demoted
    // once more. Not a test's: its words are the report's kind (tested-by.ts), and it is demoted below anyway.
    const demoted = demotion(d.path);
    const demotedTitle = isTestOrSupportFile(d.path) ? 1 : (demoted?.[0] ?? 1);
    let soft = base[i]! + weak[i]! + TITLE_MATCH * title.scores[i]! * demotedTitle;
    let hard = strong[i]!;
    if (base[i]! > 0)
      reasons[i]!.unshift(`BM25 ${scores[i]!.toFixed(2)} (${topTerms(index.bm25, i, terms).join(', ')})`);
    // After the explicit references: a reader shown the first few reasons sees those first.
    if (title.scores[i]! >= 0.5)
      reasons[i]!.push(`the title's terms match (${topTerms(index.bm25, i, title.terms).join(', ')})`);
    if (siblings.has(d.path)) {
      soft *= SIBLING_DEMOTION;
      reasons[i]!.push('another member of a family whose member the title names, demoted');
    }
    if (demoted) {
      soft *= demoted[0];
      hard *= Math.sqrt(demoted[0]); // named or in a trace, but a test or example: the user's own, more often than not
      reasons[i]!.push(demoted[1]);
    }
    return soft + hard;
  });
  const imported = importedByTopFiles(index, byPath, total, base, factor, reasons);
  const file = (i: number) => ({
    path: docs[i]!.path,
    score: Math.round(total[i]! * 1000) / 1000,
    reasons: reasons[i]!,
  });
  const ranked = docs
    .map((_, i) => file(i))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score || a.path.localeCompare(b.path));
  if (importsAfter === undefined) return ranked.slice(0, top);
  const head = ranked.slice(0, importsAfter);
  const inHead = new Set(head.map((f) => f.path));
  const next = [...imported.entries()]
    .filter(([j]) => !inHead.has(docs[j]!.path))
    .map(([j, by]) => {
      const why = `imported by ${by}, a top-ranked file`;
      return { ...file(j), reasons: reasons[j]!.includes(why) ? reasons[j]! : [...reasons[j]!, why] };
    });
  const nextPaths = new Set(next.map((f) => f.path));
  const rest = ranked.slice(importsAfter).filter((f) => !nextPaths.has(f.path));
  // They take turns with the rest of the ranking, an import first: when the plan leaves few places
  // beyond the first N, neither the imports nor the next-ranked files take them all.
  const turns: RankedFile[] = [];
  for (let k = 0; k < Math.max(next.length, rest.length); k++)
    turns.push(...[next[k], rest[k]].filter((f) => f !== undefined));
  return [...head, ...turns].slice(0, top);
}

/**
 * The modules the best-ranked library files import, when the report's words match them too: the
 * files a report points to call into them, and a bug seen in one is often fixed in what it
 * calls (the statement ranges of a traceback's formatter, the file list of a linter's runner).
 * The boost is a share of the module's own BM25, so a module that does not match the report
 * gains nothing. Only files without a demotion lead, so a test's imports are not lifted. Returns
 * every module the leaders import (index → the leader importing it), boosted or not.
 */
function importedByTopFiles(
  index: LocatorIndex,
  byPath: Map<string, number>,
  total: number[],
  base: number[],
  factor: number[],
  reasons: string[][],
): Map<number, string> {
  const leaders = total
    .map((score, i) => ({ score, i }))
    .filter((x) => x.score > 0 && factor[x.i] === 1)
    .sort((a, b) => b.score - a.score)
    .slice(0, IMPORT_LEADERS);
  const boost = new Map<number, { by: string; value: number }>();
  const imported = new Map<number, string>();
  for (const { i } of leaders) {
    const from = index.bm25.docs[i]!.path;
    for (const p of own(index.imports, from) ?? []) {
      const j = byPath.get(p);
      if (j !== undefined && !imported.has(j)) imported.set(j, from);
      if (j === undefined || base[j]! <= 0) continue;
      const value = IMPORTED_BY_TOP * base[j]! * factor[j]!;
      if (value > (boost.get(j)?.value ?? 0)) boost.set(j, { by: from, value });
    }
  }
  for (const [j, { by, value }] of boost) {
    total[j]! += value;
    reasons[j]!.push(`imported by ${by}, a top-ranked file`);
  }
  // Every module the leaders import, in their order, boosted or not: rank's `importsAfter` reads them.
  return imported;
}
