import { afterAll, describe, expect, it } from 'vitest';
import { buildIndex, locate } from '../../src/locator/index.js';
import { JsResolver, jsImportSpecifiers, jsImports, parseJsonc } from '../../src/locator/js-imports.js';
import { type Files, fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

// A small workspace: a TypeScript app with path aliases, a JavaScript app with its own jsconfig,
// and a package of the workspace imported by its name.
const REPO: Files = {
  'package.json': '{ "name": "shop", "private": true, "workspaces": ["packages/*"] }',
  'tsconfig.base.json': JSON.stringify({
    compilerOptions: {
      baseUrl: '.',
      paths: { '@config': ['./src/config/index.ts'], '@lib/*': ['src/lib/*'], '@lib/tax/*': ['src/tax-rules/*'] },
    },
  }),
  'tsconfig.json': [
    "// the app: the aliases are the base configuration's",
    '{',
    '  "extends": "./tsconfig.base.json",',
    '  "compilerOptions": { "strict": true, /* more below */ "lib": ["es2022",], },',
    '}',
  ].join('\n'),
  'src/index.ts': '',
  'src/cart.ts': '',
  'src/legacy.cjs': '',
  'src/lib/money.ts': '',
  'src/lib/format.js': '',
  'src/lib/tax/index.ts': '',
  'src/tax-rules/vat.ts': '',
  'src/config/index.ts': '',
  'src/views/page.tsx': '',
  'web/jsconfig.json': '{ "compilerOptions": { "baseUrl": "src" } }',
  'web/src/app.js': '',
  'web/src/components/nav.jsx': '',
  'packages/ui/package.json': '{ "name": "@shop/ui", "main": "dist/index.js" }',
  'packages/ui/src/index.ts': '',
  'packages/ui/src/button.tsx': '',
};
const resolver = () =>
  new JsResolver(Object.keys(REPO), (path) => {
    const content = REPO[path];
    return typeof content === 'string' ? content : undefined;
  });

describe('the JavaScript/TypeScript imports the locator follows', { timeout: 60_000 }, () => {
  afterAll(() => removeFixtureRepos());

  it('reads import … from (over lines), export … from, bare imports, import() and require()', () => {
    const source = [
      "import Decimal from 'decimal.js'",
      'import {',
      '  add,',
      '  subtract,',
      "} from './lib/money'",
      'import type { Rate } from "./lib/tax";export * from \'./legacy.cjs\'',
      "export { format } from './lib/format.js'",
      "import './polyfill'",
      "const page = () => import('./views/page')",
      "const fs = require('node:fs')",
      'const msg = "nothing is imported from here"',
    ].join('\n');
    expect(jsImportSpecifiers(source).sort()).toEqual([
      './legacy.cjs',
      './lib/format.js',
      './lib/money',
      './lib/tax',
      './polyfill',
      './views/page',
      'decimal.js',
      'node:fs',
    ]);
  });

  it('resolves a relative specifier with its extension left out, in TypeScript order', () => {
    expect(resolver().resolve('src/cart.ts', './lib/money')).toBe('src/lib/money.ts');
    expect(resolver().resolve('src/lib/money.ts', '../legacy')).toBe('src/legacy.cjs');
    expect(resolver().resolve('src/cart.ts', './views/page')).toBe('src/views/page.tsx');
  });

  it('resolves `.js` written for a `.ts` file (TypeScript ESM), and a `.js` that exists as it is', () => {
    expect(resolver().resolve('src/cart.ts', './lib/money.js')).toBe('src/lib/money.ts');
    expect(resolver().resolve('src/cart.ts', './lib/format.js')).toBe('src/lib/format.js');
  });

  it('resolves a directory to its index file: `./lib/tax` is `lib/tax/index.ts`', () => {
    expect(resolver().resolve('src/cart.ts', './lib/tax')).toBe('src/lib/tax/index.ts');
    expect(resolver().resolve('src/lib/money.ts', '..')).toBe('src/index.ts');
  });

  it('resolves tsconfig paths aliases and baseUrl, from the configuration it extends (the longest prefix wins)', () => {
    expect(resolver().resolve('src/cart.ts', '@lib/money')).toBe('src/lib/money.ts');
    expect(resolver().resolve('src/cart.ts', '@lib/tax/vat')).toBe('src/tax-rules/vat.ts');
    expect(resolver().resolve('src/views/page.tsx', '@config')).toBe('src/config/index.ts');
    expect(resolver().resolve('src/views/page.tsx', 'src/cart')).toBe('src/cart.ts');
  });

  it("follows the nearest config above the importing file: a jsconfig's baseUrl applies under its directory only", () => {
    expect(resolver().resolve('web/src/app.js', 'components/nav')).toBe('web/src/components/nav.jsx');
    expect(resolver().resolve('src/cart.ts', 'components/nav')).toBeUndefined();
    expect(resolver().resolve('web/src/app.js', '@lib/money')).toBeUndefined();
  });

  it('resolves a workspace package by its package.json name: its source entry, a file under it', () => {
    expect(resolver().resolve('src/index.ts', '@shop/ui')).toBe('packages/ui/src/index.ts');
    expect(resolver().resolve('src/index.ts', '@shop/ui/button')).toBe('packages/ui/src/button.tsx');
  });

  it("resolves other projects' modules, missing files and paths out of the repository to nothing", () => {
    const r = resolver();
    for (const spec of [
      'react',
      'node:fs',
      'decimal.js',
      './polyfill',
      '../../../etc/passwd',
      '/abs/path',
      '@other/ui',
    ])
      expect(r.resolve('src/cart.ts', spec), spec).toBeUndefined();
    expect(jsImports('src/cart.ts', "import { x } from './cart'\nimport y from 'react'\n", r)).toEqual([]);
  });

  it('reads tsconfig.json with comments and trailing commas; a string holding // is kept', () => {
    expect(parseJsonc('{ "a": "http://x", // c\n "b": [1, 2,], /* d */ }')).toEqual({ a: 'http://x', b: [1, 2] });
    expect(parseJsonc('{ broken')).toBeUndefined();
  });

  it("keeps each file's resolved imports in the index, the configuration read from the checkout", async () => {
    const repo = fixtureRepo({
      ...REPO,
      'src/cart.ts':
        "import { add } from '@lib/money'\nimport { vat } from '@lib/tax/vat'\nexport * from './lib/tax'\n",
      'web/src/app.js': "const Nav = require('components/nav')\n",
    });
    const index = await buildIndex(repo.dir);
    expect(index.imports['src/cart.ts']?.sort()).toEqual([
      'src/lib/money.ts',
      'src/lib/tax/index.ts',
      'src/tax-rules/vat.ts',
    ]);
    expect(index.imports['web/src/app.js']).toEqual(['web/src/components/nav.jsx']);
  });

  it('lifts a module the best-ranked file imports above one it does not, when both match the report', async () => {
    const repo = fixtureRepo({
      'package.json': '{ "name": "fmt", "type": "module" }',
      'src/failure.ts':
        "import { statementRange } from './ranges/index.js'\n\n" +
        'export function renderFailure(source: string[], lineno: number): string {\n' +
        "  // The failing test's source around its failing line.\n" +
        '  const [first, last] = statementRange(source, lineno)\n  return source.slice(first, last).join("\\n")\n}\n',
      'src/ranges/index.ts':
        'export function statementRange(lines: string[], lineno: number): [number, number] {\n' +
        '  // The first and last line of the statement at lineno: where the statement ends.\n  let end = lineno\n' +
        '  while (end < lines.length && lines[end].startsWith(" ")) end++\n  return [lineno, end]\n}\n',
      'src/columns.ts':
        'export function columnRange(lines: string[], lineno: number): [number, number] {\n' +
        "  // The columns of the statement at lineno: where the statement's line starts and ends.\n" +
        '  const line = lines[lineno]\n  return [line.length - line.trimStart().length, line.length]\n}\n',
      'src/colors.ts':
        'export const RED = "\\x1b[31m"\n\nexport function red(text: string) {\n  return RED + text\n}\n',
    });
    const out = await locate(
      repo.dir,
      'An extra line is shown after the failing statement\n\n' +
        'TypeError: Cannot read properties of undefined\n' +
        '    at renderFailure (/app/node_modules/fmt/src/failure.ts:5:40)\n\n' +
        'The lines shown after the failing statement include the next decorator: the statement ends at the wrong ' +
        'line.',
      { top: 4 },
    );
    const paths = out.files.map((f) => f.path);

    expect(paths[0]).toBe('src/failure.ts');
    expect(paths.indexOf('src/ranges/index.ts')).toBeGreaterThan(0);
    expect(paths.indexOf('src/ranges/index.ts')).toBeLessThan(paths.indexOf('src/columns.ts'));
    expect(out.files.find((f) => f.path === 'src/ranges/index.ts')?.reasons.join('\n')).toContain(
      'imported by src/failure.ts',
    );
  });
});
