import { dirOf, stemOf } from './paths.js';
import { isTestOrSupportFile } from '../text/test-paths.js';

/**
 * Files named for the thing they implement, and the names a report uses for things.
 *
 * Many projects keep one file per thing of a kind in one directory: a highlighter's languages
 * (`components/prism-yaml.js`, `src/languages/cpp.js`), a linter's rules (`lib/rules/no-shadow.js`),
 * a library's locales (`src/locale/zh-cn.js`). A report
 * about one of them names it — "YAML strings fail with trailing comments", "BUG: C++ code
 * highlight", "implicit-arrow-linebreak breaks with a comment" — and describes what it looks like
 * rather than naming the code's identifiers, so BM25 and the symbol index find little else.
 */

/** A directory with at least this many files of one extension is a family (one file per thing). */
const FAMILY_MIN = 6;

/** Names shorter than this are too often words of any text (`it`, `go`, `d`). */
const NAME_MIN = 3;

/** Words that are names of files in some family but, in a report, are nearly always prose. */
const PROSE_WORDS = new Set([
  'the',
  'and',
  'for',
  'not',
  'but',
  'can',
  'use',
  'all',
  'new',
  'one',
  'set',
  'get',
  'any',
  'bug',
  'fix',
  'add',
  'see',
  'log',
  'via',
  'way',
  'yes',
  'now',
  'how',
  'why',
  'out',
  'has',
  'had',
  'was',
  'are',
  'you',
  'our',
  'its',
  'may',
  'too',
  'two',
  'few',
  'own',
  'old',
  'per',
  'let',
  'var',
  'run',
  'end',
  'top',
  'key',
  'index',
  'main',
  'base',
  'core',
  'util',
  'utils',
  'common',
  'helpers',
  'types',
  'default',
  'test',
]);

const extOf = (path: string) => /\.[^./]+$/.exec(path)?.[0] ?? '';
const joined = (name: string) => name.replace(/[-_.]/g, '');

/**
 * The prefix most of a family's names share up to a separator (`prism-` of `prism-yaml`; a family
 * may hold an odd one out, `index`), or none.
 */
function sharedPrefix(names: string[]): string {
  const counts = new Map<string, number>();
  for (const n of names) {
    const m = /^[a-z0-9]+[-_.]/.exec(n);
    if (m) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  const [prefix, count] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  return count >= (names.length * 2) / 3 ? prefix : '';
}

/** Source files only: a family of templates, fixtures or data is not where a fix goes. */
const SOURCE = /\.(py|js|jsx|mjs|cjs|ts|tsx|mts|cts|go|rs|java|kt|scala|c|h|cc|cpp|hpp|cs|rb|php|swift|lua)$/i;

/**
 * Each source file of a family with the name it is filed under, lower-cased: its file name less
 * the extension and the prefix most of its siblings share. (A directory of index files,
 * `src/plugin/utc/index.js`, is not taken as a family: a plugin or feature spans several modules,
 * and a report naming it is as often about the core it calls.)
 */
export function familyNames(paths: readonly string[]): Map<string, string> {
  const groups = new Map<string, { path: string; stem: string }[]>();
  for (const path of paths) {
    if (!SOURCE.test(path) || isTestOrSupportFile(path)) continue;
    const key = `${dirOf(path)}/*${extOf(path)}`;
    groups.set(key, [...(groups.get(key) ?? []), { path, stem: stemOf(path) }]);
  }
  // The project's own name (`prism.js`, `marked.min.js`, a `highlight.js` directory at the top): a
  // report names the project everywhere, and `src/marked.js` is not what it is about.
  const project = new Set(paths.map((p) => p.split('/')[0]!.split('.')[0]!.toLowerCase()));
  const names = new Map<string, string>();
  for (const members of groups.values()) {
    if (members.length < FAMILY_MIN) continue;
    const prefix = sharedPrefix(members.map((m) => m.stem.toLowerCase()));
    for (const m of members) {
      const stem = m.stem.toLowerCase();
      const name = stem.startsWith(prefix) ? stem.slice(prefix.length) : stem;
      if (joined(name).length >= NAME_MIN && !PROSE_WORDS.has(name) && !project.has(name)) names.set(m.path, name);
    }
  }
  return names;
}

/** How much a name weighs by where the report uses it: its title most, its code least. */
const WHERE = { title: 1, prose: 0.6, code: 0.3 } as const;

/**
 * The names a report uses as names, lower-cased, with the weight of the part they are in: an
 * acronym or a word with two capitals (`YAML`, `JavaScript`), a language named with its symbols and
 * so also as its files spell it (`C++` → `cpp`, `F#` → `fsharp`), a kebab-case or snake_case
 * compound (`implicit-arrow-linebreak`, `zh-cn`), a dotted one of two capitals (`VB.NET` → `vbnet`), or a
 * word in backticks. Plain words are prose
 * (`format`, `classes`), and so, too often, is a capitalised one ("the Language Card").
 */
export function reportNames(parts: { title: string; prose: string; code: string }): Map<string, number> {
  const out = new Map<string, number>();
  const add = (name: string, w: number) => {
    if (joined(name).length < NAME_MIN || PROSE_WORDS.has(name)) return;
    out.set(name, Math.max(out.get(name) ?? 0, w));
  };
  for (const [part, text] of [
    ['title', parts.title],
    ['prose', parts.prose],
    ['code', parts.code],
  ] as const) {
    const w = WHERE[part];
    // A title's first word, capitalised, is what the report is about as often as not ("Java code highlight
    // …", "Javascript syntax rendering error"); inside a sentence a capital is too often prose.
    const first = part === 'title' ? /^\s*([A-Z][a-z][A-Za-z0-9]*)\b(?![-.:]\w)/.exec(text) : null;
    if (first) add(first[1]!.toLowerCase(), w);
    // A label the title opens with, in brackets: "(sql) highlight.js is breaking…", "[xml] …".
    const label = part === 'title' ? /^\s*[([]([A-Za-z][\w.+#-]{0,30})[)\]]/.exec(text) : null;
    if (label) add(joined(label[1]!.toLowerCase().replace(/\+\+$/, 'pp').replace(/#$/, 'sharp')), w);
    for (const m of text.matchAll(/`([^`\n]{1,60})`/g)) add(m[1]!.trim().toLowerCase(), w);
    for (const m of text.matchAll(/(?<![\w#+.-])([A-Za-z][A-Za-z0-9]*)(\+\+|#)(?![\w#+])/g)) {
      const base = m[1]!.toLowerCase();
      add(m[2] === '#' ? `${base}sharp` : `${base}pp`, w);
    }
    for (const m of text.matchAll(/(?<![\w-])[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)+(?![\w-])/g)) {
      add(m[0].toLowerCase(), w);
      add(joined(m[0].toLowerCase()), w);
    }
    // A dotted name of two capitals or more (`VB.NET`, `ASP.NET`), as its files spell it (`vbnet`); not a file name.
    for (const m of text.matchAll(/(?<![\w.-])[A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z0-9]+)+(?![\w-]|\.\w)/g))
      if ((m[0].match(/[A-Z]/g) ?? []).length >= 2) add(joined(m[0].toLowerCase()), w);
    for (const m of text.matchAll(/(?<![\w-])[A-Za-z][A-Za-z0-9]*(?![\w-])/g))
      if ((m[0].match(/[A-Z]/g) ?? []).length >= 2) add(m[0].toLowerCase(), w);
  }
  return out;
}

/** A family file's boost: the report's weight for its name, shared among the family files it names. */
export function familyMatches(
  names: ReadonlyMap<string, string>,
  used: ReadonlyMap<string, number>,
): Map<string, { name: string; weight: number }> {
  const hits = new Map<string, { name: string; weight: number }>();
  for (const [path, name] of names) {
    const w = Math.max(used.get(name) ?? 0, used.get(joined(name)) ?? 0);
    if (w > 0) hits.set(path, { name, weight: w });
  }
  // A report that lists many languages or rules points at none of them in particular.
  const shared = Math.sqrt(Math.max(1, new Set([...hits.values()].map((h) => h.name)).size));
  for (const hit of hits.values()) hit.weight /= shared;
  return hits;
}

/** The fewest members a family has for its other members to be demoted when the title names one. */
const SIBLINGS_MIN = 40;

/**
 * The other members of each family the title names a member of: "VB.NET - Quotes break on included '@'
 * symbol" is about `prism-vbnet.js`, and `prism-abap.js` or `prism-elm.js`, which match its other words
 * ("quotes", "symbol"), are not what it is about however well they match them. Only the title's names
 * count: a report's prose and code name languages or rules in passing.
 */
export function siblingsOfTitleNames(
  names: ReadonlyMap<string, string>,
  title: string,
  imports: Readonly<Record<string, readonly string[]>>,
): Set<string> {
  const said = familyMatches(names, reportNames({ title, prose: '', code: '' }));
  const familyOf = (p: string) => `${dirOf(p)}/*${extOf(p)}`;
  const size = new Map<string, number>();
  for (const p of names.keys()) size.set(familyOf(p), (size.get(familyOf(p)) ?? 0) + 1);
  // Only a large family (languages, rules, locales): a package's dozen modules are no family of one kind,
  // and a title's "API" names `api.py` without its siblings being beside the point.
  const families = new Set([...said.keys()].map(familyOf).filter((f) => (size.get(f) ?? 0) >= SIBLINGS_MIN));
  // A member the named one builds on (TypeScript's grammar imports JavaScript's) is where its bug may be.
  const built = new Set([...said.keys()].flatMap((p) => (Object.hasOwn(imports, p) ? imports[p]! : [])));
  const out = new Set<string>();
  for (const path of names.keys())
    if (!said.has(path) && !built.has(path) && families.has(familyOf(path))) out.add(path);
  return out;
}
