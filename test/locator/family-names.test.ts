import { describe, expect, it } from 'vitest';
import { familyMatches, familyNames, reportNames, siblingsOfTitleNames } from '../../src/locator/family-names.js';
import { promptParts } from '../../src/locator/rank.js';

const names = (prompt: string) => reportNames(promptParts(prompt));

describe('files filed under a name', () => {
  const languages = ['yaml', 'json', 'cpp', 'fsharp', 'javascript', 'markup', 'd'].map(
    (l) => `components/prism-${l}.js`,
  );

  it('names each file of a family by its name less the prefix its siblings share', () => {
    const found = familyNames([...languages, 'components/index.js', 'prism.js', 'src/a.js']);
    expect(found.get('components/prism-yaml.js')).toBe('yaml');
    expect(found.get('components/prism-fsharp.js')).toBe('fsharp');
    // too short to tell from a word of any text; not a family; a family of one
    expect(found.has('components/prism-d.js')).toBe(false);
    expect(found.has('prism.js')).toBe(false);
    expect(found.has('src/a.js')).toBe(false);
  });

  it('a directory of index files is no family', () => {
    const plugins = ['utc', 'timezone', 'isoWeek', 'duration', 'relativeTime', 'advancedFormat'];
    expect(familyNames(plugins.map((p) => `src/plugin/${p}/index.js`)).size).toBe(0);
  });

  it('a directory of a few files is no family', () => {
    expect(familyNames(['src/yaml.js', 'src/json.js', 'src/cpp.js']).size).toBe(0);
  });
});

describe('names a report uses', () => {
  it('reads acronyms, symbols, compounds and backticks', () => {
    const used = names(
      'BUG: C++ code highlight\nThe F# and YAML highlighters break on `markup` and on ' +
        'implicit-arrow-linebreak; see the Language Card too.\nFormat strings are wrong.',
    );
    for (const n of ['cpp', 'fsharp', 'yaml', 'markup', 'implicit-arrow-linebreak', 'implicitarrowlinebreak'])
      expect(used.has(n), n).toBe(true);
    // capitalised words and plain words are prose
    expect(used.has('card')).toBe(false);
    expect(used.has('format')).toBe(false);
    expect(used.has('strings')).toBe(false);
    expect(used.get('cpp')).toBeGreaterThan(used.get('yaml')!);
  });

  it("reads a title's first word when capitalised, not a capitalised word elsewhere", () => {
    const used = names('Java code highlight "UUID" incorrectly\nOur website: HackerTalk shows Kotlin wrong.');
    expect(used.get('java')).toBeGreaterThan(0);
    expect(used.has('our')).toBe(false);
    expect(used.has('kotlin')).toBe(false);
    // a title opening with a file or a dotted name is left to the rules for those
    expect(names('Foo.bar breaks').has('foo')).toBe(false);
  });

  it('reads a label the title opens with in brackets', () => {
    expect(names('(sql) highlight.js is breaking on quote escape sequences').has('sql')).toBe(true);
    expect(names('[C++] templates lose their colour').has('cpp')).toBe(true);
    // only at the title's start, and only in the title
    expect(names('highlight.js breaks (sql) escapes').has('sql')).toBe(false);
    expect(names('Escapes break\n(sql) is the language').has('sql')).toBe(false);
  });

  it('reads a dotted name of two capitals as its files spell it, not a file name nor a sentence end', () => {
    const used = names('VB.NET - Quotes break\nSee prism-basic.js and Node.js. It broke.Then again.');
    expect(used.has('vbnet')).toBe(true);
    expect(used.has('prismbasicjs')).toBe(false);
    expect(used.has('nodejs')).toBe(false);
    expect(used.has('brokethen')).toBe(false);
  });

  it('the title counts most, and a report naming many shares the boost', () => {
    const family = familyNames(
      ['yaml', 'json', 'cpp', 'ruby', 'rust', 'markup'].map((l) => `components/prism-${l}.js`),
    );
    const one = familyMatches(family, names('YAML strings fail with trailing comments\nUsing it.'));
    expect([...one.keys()]).toEqual(['components/prism-yaml.js']);
    const many = familyMatches(family, names('Several languages\nYAML, JSON, `ruby` and `rust` all break.'));
    expect(many.size).toBe(4);
    expect(many.get('components/prism-yaml.js')!.weight).toBeLessThan(one.get('components/prism-yaml.js')!.weight);
  });
});

describe("a family's other members when the title names one", () => {
  // A family of languages as large as a highlighter's: forty and more.
  const languages = Array.from({ length: 45 }, (_, k) => `lang${String.fromCharCode(97 + (k % 26))}${k}`);
  const paths = [...['vbnet', 'basic', 'typescript', 'javascript', ...languages].map((l) => `src/languages/${l}.js`)];
  const imports = { 'src/languages/typescript.js': ['src/languages/javascript.js'] };

  it('demotes the other members, not the named one nor the one it builds on', () => {
    const siblings = siblingsOfTitleNames(familyNames(paths), 'VB.NET - Quotes break on included @ symbol', imports);
    expect(siblings.has('src/languages/vbnet.js')).toBe(false);
    expect(siblings.has('src/languages/basic.js')).toBe(true);
    expect(siblings.has(`src/languages/${languages[0]}.js`)).toBe(true);
    const ts = siblingsOfTitleNames(familyNames(paths), '(TypeScript) Camel-case type parameters', imports);
    expect(ts.has('src/languages/typescript.js')).toBe(false);
    expect(ts.has('src/languages/javascript.js')).toBe(false);
    expect(ts.has('src/languages/basic.js')).toBe(true);
  });

  it("only the title's names count, and only in a large family", () => {
    expect(siblingsOfTitleNames(familyNames(paths), 'Quotes break', imports).size).toBe(0);
    // A name in the report's prose is a name in passing.
    const report = promptParts('Quotes break\n\nSeen in VB.NET too');
    expect(siblingsOfTitleNames(familyNames(paths), report.title, imports).size).toBe(0);
    // A package of a dozen modules is no family of one kind: "API" names api.py, not against its siblings.
    const pkg = ['api', 'adapters', 'sessions', 'models', 'cookies', 'hooks', 'auth', 'utils'].map(
      (m) => `requests/${m}.py`,
    );
    expect(familyNames(pkg).get('requests/api.py')).toBe('api');
    expect(siblingsOfTitleNames(familyNames(pkg), 'urllib3 exceptions passing through requests API', {}).size).toBe(0);
  });
});
