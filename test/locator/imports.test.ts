import { afterAll, describe, expect, it } from 'vitest';
import { ModuleResolver, pythonImports } from '../../src/locator/imports.js';
import { locate } from '../../src/locator/index.js';
import { type Files, fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

const PATHS = [
  'setup.py',
  'src/shop/__init__.py',
  'src/shop/cart.py',
  'src/shop/os.py',
  'src/shop/pricing/__init__.py',
  'src/shop/pricing/tax.py',
  'src/shop/pricing/rates.py',
  'scripts/release.py',
  'tests/test_cart.py',
];

describe('the repository imports the locator follows', { timeout: 60_000 }, () => {
  afterAll(() => removeFixtureRepos());

  it('resolves module names under source roots only, one file each', () => {
    const modules = new ModuleResolver(PATHS);
    expect(modules.resolve('shop.cart')).toBe('src/shop/cart.py');
    expect(modules.resolve('shop.pricing')).toBe('src/shop/pricing/__init__.py');
    expect(modules.resolve('src.shop.pricing.tax')).toBe('src/shop/pricing/tax.py');
    // Inside a package, not at a source root: `import os` is the standard library's.
    expect(modules.resolve('os')).toBeUndefined();
    expect(modules.resolve('tax')).toBeUndefined();
    expect(modules.resolve('release')).toBe('scripts/release.py');
  });

  it('reads absolute, relative and parenthesised imports; submodules named in `from … import`', () => {
    const modules = new ModuleResolver(PATHS);
    const cart = [
      'import os, sys',
      'import shop.pricing.rates as rates',
      'from . import pricing',
      'from .pricing import (',
      '    tax,',
      '    compute,  # not a module: the package is imported',
      ')',
      'from collections import OrderedDict',
      'def total():',
      '    from .os import cwd  # an import inside a function counts too',
    ].join('\n');
    expect(pythonImports('src/shop/cart.py', cart, modules).sort()).toEqual([
      'src/shop/__init__.py',
      'src/shop/os.py',
      'src/shop/pricing/__init__.py',
      'src/shop/pricing/rates.py',
      'src/shop/pricing/tax.py',
    ]);
    expect(pythonImports('src/shop/pricing/tax.py', 'from ..cart import total\nfrom .. import os\n', modules)).toEqual([
      'src/shop/cart.py',
      'src/shop/__init__.py',
      'src/shop/os.py',
    ]);
    // A relative import climbing out of the top package, and a script outside any package: nothing.
    expect(pythonImports('src/shop/cart.py', 'from ... import x\n', modules)).toEqual([]);
    expect(pythonImports('scripts/release.py', 'from .cart import x\n', modules)).toEqual([]);
  });

  it('lifts a module the best-ranked file imports above one it does not, when both match the report', async () => {
    const files: Files = {
      'fmt/__init__.py': '',
      'fmt/failure.py':
        'from .ranges import statement_range\n\n\ndef render_failure(source, lineno):\n' +
        '    """The failing test\'s source around its failing line."""\n' +
        '    first, last = statement_range(source, lineno)\n    return source[first:last]\n',
      'fmt/ranges.py':
        'def statement_range(lines, lineno):\n    """The first and last line of the statement at lineno."""\n' +
        '    end = lineno\n    while end < len(lines) and lines[end].startswith(" "):\n        end += 1\n' +
        '    return lineno, end\n',
      'fmt/columns.py':
        'def column_range(lines, lineno):\n    """The columns of the statement at lineno: where the statement\'s line ' +
        'starts and ends."""\n' +
        '    line = lines[lineno]\n    return len(line) - len(line.lstrip()), len(line)\n',
      'fmt/colors.py': 'RED = "\\x1b[31m"\n\n\ndef red(text):\n    return RED + text\n',
    };
    const repo = fixtureRepo(files);
    const out = await locate(
      repo.dir,
      'An extra line is shown after the failing statement\n\nTraceback (most recent call last):\n' +
        '  File "/venv/lib/python3.11/site-packages/fmt/failure.py", line 7, in render_failure\n' +
        '    return source[first:last]\nIndexError: list index out of range\n\n' +
        'The lines shown after the failing statement include the next decorator: the statement ends at the wrong ' +
        'line.',
      { top: 4 },
    );
    const paths = out.files.map((f) => f.path);
    expect(paths[0]).toBe('fmt/failure.py');
    expect(paths.indexOf('fmt/ranges.py')).toBeGreaterThan(0);
    expect(paths.indexOf('fmt/ranges.py')).toBeLessThan(paths.indexOf('fmt/columns.py'));
    expect(out.files.find((f) => f.path === 'fmt/ranges.py')?.reasons.join('\n')).toContain(
      'imported by fmt/failure.py',
    );
  });

  it('with importsAfter, the modules the best-ranked files import lead the files after the first N, matching or not', async () => {
    // dates.js imports constants.js, whose words the report does not share; six other modules do share them.
    const other = (n: number) => [
      `src/parse${n}.js`,
      `export const parse${n} = (text) => text.split('-'); // date text\n`,
    ];
    const files: Files = {
      'src/dates.js':
        "import { FORMAT } from './constants.js';\nexport function convertTimezone(date, zone) {\n" +
        '  // convert the date to another timezone\n  return new Date(date).toLocaleString(FORMAT, { timeZone: zone });\n}\n',
      'src/constants.js': "export const FORMAT = 'en-US';\nexport const PATTERN = /^(\\d{4})/;\n",
      ...Object.fromEntries([1, 2, 3, 4, 5, 6].map(other)),
    };
    const repo = fixtureRepo(files);
    const report = 'Converting a date to another timezone returns the wrong date text';
    const plain = (await locate(repo.dir, report, { top: 8 })).files.map((f) => f.path);
    expect(plain[0]).toBe('src/dates.js');
    expect(plain).not.toContain('src/constants.js');
    const led = await locate(repo.dir, report, { top: 4, importsAfter: 2 });
    // the first two as ranked, then what the best-ranked file imports, then the ranking goes on
    expect(led.files.slice(0, 2).map((f) => f.path)).toEqual(plain.slice(0, 2));
    expect(led.files[2]).toMatchObject({ path: 'src/constants.js' });
    expect(led.files[2]!.reasons).toContain('imported by src/dates.js, a top-ranked file');
    expect(led.files[3]!.path).toBe(plain[2]);
  });
});
