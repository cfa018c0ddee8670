import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type Edit, applyEdits, parseEdits } from '../../src/edits/index.js';

const dirs: string[] = [];
let root: string;

function files(map: Record<string, string>): void {
  for (const [path, content] of Object.entries(map)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}
const read = (path: string): string => readFileSync(join(root, path), 'utf8');
const replace = (path: string, search: string, replacement: string): Edit => ({
  kind: 'replace',
  path,
  search,
  replace: replacement,
});

const CART = [
  'class Cart:',
  '    def __init__(self):',
  '        self.items = []',
  '',
  '    def add(self, item, price):',
  '        self.items.append((item, price))',
  '',
  '    def total(self):',
  '        return sum(p for _, p in self.items)',
  '',
].join('\n');

describe('applying edits', () => {
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'emend-edits-'));
    dirs.push(root);
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('applies an exact match', async () => {
    files({ 'shop/cart.py': CART });
    const r = await applyEdits(root, [
      replace(
        'shop/cart.py',
        '    def total(self):\n        return sum(p for _, p in self.items)\n',
        '    def total(self):\n        return round(sum(p for _, p in self.items), 2)\n',
      ),
    ]);
    expect(r).toEqual({
      applied: [{ path: 'shop/cart.py', kind: 'modified', match: 'exact' }],
      failed: [],
      already: [],
    });
    expect(read('shop/cart.py')).toBe(
      CART.replace('return sum(p for _, p in self.items)', 'return round(sum(p for _, p in self.items), 2)'),
    );
  });

  it('applies a SEARCH indented 2 spaces less than the file, re-indenting the replacement', async () => {
    files({ 'shop/cart.py': CART });
    const r = await applyEdits(root, [
      replace(
        'shop/cart.py',
        '  def add(self, item, price):\n      self.items.append((item, price))\n',
        '  def add(self, item, price):\n      if price < 0:\n          raise ValueError(price)\n      ' +
          'self.items.append((item, price))\n',
      ),
    ]);
    expect(r.applied).toEqual([{ path: 'shop/cart.py', kind: 'modified', match: 'whitespace' }]);
    expect(read('shop/cart.py')).toContain(
      '    def add(self, item, price):\n        if price < 0:\n            raise ValueError(price)\n        ' +
        'self.items.append((item, price))\n',
    );
  });

  it('ignores trailing whitespace and blank lines at the ends of SEARCH', async () => {
    files({ 'a.py': 'x = 1   \ny = 2\nz = 3\n' });
    const r = await applyEdits(root, [replace('a.py', '\nx = 1\ny = 2  \n\n', '\nx = 10\ny = 20\n\n')]);
    expect(r.applied).toEqual([{ path: 'a.py', kind: 'modified', match: 'whitespace' }]);
    expect(read('a.py')).toBe('x = 10\ny = 20\nz = 3\n');
  });

  it('refuses a SEARCH that matches twice, and applies it once made unique by context', async () => {
    const src = 'def a():\n    return None\n\ndef b():\n    return None\n';
    files({ 'm.py': src });
    const r1 = await applyEdits(root, [replace('m.py', '    return None\n', '    return 0\n')]);
    expect(r1.applied).toEqual([]);
    expect(r1.failed[0]!.reason).toMatch(/matches 2 places .*include more surrounding lines/);
    expect(read('m.py')).toBe(src);
    const r2 = await applyEdits(root, [replace('m.py', 'def b():\n    return None\n', 'def b():\n    return 0\n')]);
    expect(r2.applied).toEqual([{ path: 'm.py', kind: 'modified', match: 'exact' }]);
    expect(read('m.py')).toBe('def a():\n    return None\n\ndef b():\n    return 0\n');
  });

  it('applies a near miss (one word changed in six lines) as fuzzy', async () => {
    files({ 'shop/cart.py': CART });
    const search = CART.split('\n').slice(3, 9).join('\n').replace('append((item, price))', 'append((item, cost))');
    const r = await applyEdits(root, [
      replace(
        'shop/cart.py',
        `${search}\n`,
        '\n    def add(self, item, price):\n        self.items.insert(0, (item, price))\n\n    def ' +
          'total(self):\n        return sum(p for _, p in self.items)\n',
      ),
    ]);
    expect(r.applied).toEqual([{ path: 'shop/cart.py', kind: 'modified', match: 'fuzzy' }]);
    expect(read('shop/cart.py')).toBe(
      CART.replace('self.items.append((item, price))', 'self.items.insert(0, (item, price))'),
    );
  });

  it('refuses an ambiguous fuzzy match', async () => {
    const block = (name: string) =>
      `def ${name}(order):\n    total = order.subtotal()\n    total += order.shipping()\n    total -= ` +
      `order.discount()\n    log("computed", total)\n    return total\n`;
    const src = `${block('price_a')}\n${block('price_b')}`;
    files({ 'p.py': src });
    const search = block('price_c').replace('shipping', 'shiping');
    const r = await applyEdits(root, [replace('p.py', search, 'pass\n')]);
    expect(r.applied).toEqual([]);
    expect(r.failed[0]!.reason).toMatch(/about equally similar to lines 1-6 .* and lines 8-13/);
    expect(read('p.py')).toBe(src);
  });

  it('explains a miss with the closest lines as the file has them, without numbers', async () => {
    files({ 'shop/cart.py': CART });
    const r = await applyEdits(root, [
      replace('shop/cart.py', '    def total(self):\n        return len(self.items) * price_of_everything\n', 'x\n'),
    ]);
    expect(r.failed).toHaveLength(1);
    const reason = r.failed[0]!.reason;
    expect(reason).toMatch(/^SEARCH not found .* closest is a fuzzy match at lines 8-9, \d+% similar \(90% needed\)/);
    expect(reason).toContain('first difference is line 9');
    // The closest window and two lines of context around it, as the file has them: no `N| ` to copy back.
    expect(reason).toContain(
      'its lines 6-9 read:\n```\n        self.items.append((item, price))\n\n    def total(self):\n' +
        '        return sum(p for _, p in self.items)\n```',
    );
    expect(reason).not.toMatch(/^ *\d+\|/m);
    expect(reason.length).toBeLessThan(2500);
  });

  it('keeps a CRLF file CRLF and a file without final newline without one', async () => {
    files({ 'win.txt': 'one\r\ntwo\r\nthree\r\n', 'nofinal.txt': 'alpha\nbeta\ngamma' });
    const r = await applyEdits(root, [
      replace('win.txt', 'two\n', 'TWO\nTWO AND A HALF\n'),
      replace('nofinal.txt', 'gamma\n', 'GAMMA\nDELTA\n'),
    ]);
    expect(r.failed).toEqual([]);
    expect(read('win.txt')).toBe('one\r\nTWO\r\nTWO AND A HALF\r\nthree\r\n');
    expect(read('nofinal.txt')).toBe('alpha\nbeta\nGAMMA\nDELTA');
  });

  it('applies a CRLF answer to a CRLF file with a BOM, keeping both', async () => {
    files({ 'win.cs': '\uFEFFclass A\r\n{\r\n    int x = 1;\r\n}\r\n' });
    const { edits } = parseEdits(
      'win.cs\r\n```csharp\r\n<<<<<<< SEARCH\r\n    int x = 1;\r\n=======\r\n    int x = 2;\r\n    int y = ' +
        '3;\r\n>>>>>>> REPLACE\r\n```\r\n',
    );
    const r = await applyEdits(root, edits);
    expect(r.applied).toEqual([{ path: 'win.cs', kind: 'modified', match: 'exact' }]);
    expect(read('win.cs')).toBe('\uFEFFclass A\r\n{\r\n    int x = 2;\r\n    int y = 3;\r\n}\r\n');
  });

  it('finds a fuzzy match in a large file in reasonable time', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `    value_${i} = compute(${i}, "item ${i % 37}")`);
    files({ 'big.py': `${lines.join('\n')}\n` });
    const search = lines.slice(1500, 1520).map((l) => l.replace('compute', 'compte'));
    const started = Date.now();
    const r = await applyEdits(root, [replace('big.py', `${search.join('\n')}\n`, '    pass\n')]);
    expect(r.applied).toEqual([{ path: 'big.py', kind: 'modified', match: 'fuzzy' }]);
    // Generous: a loaded CI machine; unoptimised scoring took many seconds here.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(read('big.py').split('\n')).toHaveLength(3000 - 20 + 1 + 1);
  });

  it('creates a file in new directories from an empty SEARCH, and fills an existing empty file', async () => {
    files({ 'empty.py': '', 'full.py': 'x = 1\n' });
    const { edits } = parseEdits(
      [
        'deep/er/new.py',
        '<<<<<<< SEARCH',
        '=======',
        'print("hi")',
        '>>>>>>> REPLACE',
        'empty.py',
        '<<<<<<< SEARCH',
        '=======',
        'y = 2',
        '>>>>>>> REPLACE',
        'full.py',
        '<<<<<<< SEARCH',
        '=======',
        'z = 3',
        '>>>>>>> REPLACE',
      ].join('\n'),
    );
    const r = await applyEdits(root, edits);
    expect(r.applied).toEqual([
      { path: 'deep/er/new.py', kind: 'created', match: 'new' },
      { path: 'empty.py', kind: 'modified', match: 'exact' },
    ]);
    expect(r.failed).toEqual([
      { path: 'full.py', reason: 'SEARCH is empty but path exists; quote the lines to replace' },
    ]);
    expect(read('deep/er/new.py')).toBe('print("hi")\n');
    expect(read('empty.py')).toBe('y = 2\n');
    expect(read('full.py')).toBe('x = 1\n');
  });

  it('deletes a file, and reports deleting a missing one', async () => {
    files({ 'old.py': 'gone\n' });
    const r = await applyEdits(root, parseEdits('DELETE old.py\nDELETE never.py\n').edits);
    expect(r.applied).toEqual([{ path: 'old.py', kind: 'deleted', match: 'exact' }]);
    expect(r.failed).toEqual([{ path: 'never.py', reason: 'cannot delete: no such file' }]);
    expect(existsSync(join(root, 'old.py'))).toBe(false);
  });

  it('refuses paths that leave the repository or enter .git', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'emend-edits-outside-'));
    dirs.push(outside);
    writeFileSync(join(outside, 'secret.txt'), 'secret\n');
    mkdirSync(join(root, '.git'));
    writeFileSync(join(root, '.git', 'config'), '[core]\n');
    symlinkSync(outside, join(root, 'link'));
    symlinkSync(join(outside, 'secret.txt'), join(root, 'secret-link'));
    symlinkSync('.git', join(root, 'gitlink'));
    const edits: Edit[] = [
      replace('../x', '', 'x\n'),
      replace('/etc/passwd', 'root\n', 'x\n'),
      replace('.git/config', '[core]\n', '[core]\nhooksPath = /tmp\n'),
      replace('link/secret.txt', 'secret\n', 'x\n'),
      replace('link/new.txt', '', 'x\n'),
      replace('secret-link', 'secret\n', 'x\n'),
      replace('gitlink/config', '[core]\n', 'x\n'),
      { kind: 'delete', path: 'a/../../x' },
    ];
    const r = await applyEdits(root, edits);
    expect(r.applied).toEqual([]);
    expect(r.failed.map((f) => f.reason)).toEqual([
      expect.stringMatching(/"\.\." is refused/),
      expect.stringMatching(/absolute paths are refused/),
      expect.stringMatching(/inside \.git are refused/),
      expect.stringMatching(/outside the repository/),
      expect.stringMatching(/outside the repository/),
      expect.stringMatching(/outside the repository/),
      expect.stringMatching(/into \.git/),
      expect.stringMatching(/"\.\." is refused/),
    ]);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(read('.git/config')).toBe('[core]\n');
  });

  it('edits through links that stay inside, and refuses a link out, a FIFO and a dangling link with the reason', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'emend-edits-outside-'));
    dirs.push(outside);
    writeFileSync(join(outside, 'key'), 'secret\n');
    files({ 'src/a.py': 'x = 1\n' });
    symlinkSync('src/a.py', join(root, 'alias.py'));
    symlinkSync('src', join(root, 'lib'));
    symlinkSync(join(outside, 'key'), join(root, 'README.md'));
    symlinkSync('nowhere.py', join(root, 'dangling.py'));
    execFileSync('mkfifo', [join(root, 'pipe.txt')]);
    const r = await applyEdits(root, [
      replace('alias.py', 'x = 1\n', 'x = 2\n'),
      replace('lib/a.py', 'x = 2\n', 'x = 3\n'),
      replace('README.md', 'secret\n', 'x\n'),
      { kind: 'delete', path: 'README.md' },
      replace('pipe.txt', 'a\n', 'b\n'),
      replace('dangling.py', '', 'y = 1\n'),
    ]);
    expect(r.applied.map((a) => a.path)).toEqual(['alias.py', 'lib/a.py']);
    expect(read('src/a.py')).toBe('x = 3\n');
    expect(r.failed).toEqual([
      {
        path: 'README.md',
        reason:
          `README.md is a symlink -> ${join(outside, 'key')}, which leads outside the repository; it is not ` +
          `followed, so it cannot be edited (edit the files inside the repository instead)`,
      },
      {
        path: 'README.md',
        reason: expect.stringMatching(/^README\.md is a symlink -> .*, which leads outside the repository/),
      },
      { path: 'pipe.txt', reason: 'pipe.txt is not a regular file (a fifo); only regular files are read or written' },
      { path: 'dangling.py', reason: 'dangling.py: dangling.py is a symlink to a missing target' },
    ]);
    expect(readFileSync(join(outside, 'key'), 'utf8')).toBe('secret\n');
    expect(existsSync(join(root, 'nowhere.py'))).toBe(false);
  });

  it('applies two edits to one file in sequence, and does not let a failing edit stop the others', async () => {
    files({ 'a.py': 'x = 1\ny = 2\n', 'b.py': 'b = 1\n' });
    const r = await applyEdits(root, [
      replace('a.py', 'x = 1\n', 'x = 10\n'),
      replace('b.py', 'nothing like this at all\n', 'q\n'),
      // Sees the first edit's result: its SEARCH quotes the new line.
      replace('a.py', 'x = 10\ny = 2\n', 'x = 10\ny = 20\n'),
    ]);
    expect(r.applied).toEqual([
      { path: 'a.py', kind: 'modified', match: 'exact' },
      { path: 'a.py', kind: 'modified', match: 'exact' },
    ]);
    expect(r.failed).toEqual([{ path: 'b.py', reason: expect.stringMatching(/^SEARCH not found/) }]);
    expect(read('a.py')).toBe('x = 10\ny = 20\n');
  });

  it('refuses binary files and edits to missing files', async () => {
    writeFileSync(join(root, 'img.bin'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    const r = await applyEdits(root, [replace('img.bin', 'P\n', 'Q\n'), replace('nope.py', 'a\n', 'b\n')]);
    expect(r.failed).toEqual([
      { path: 'img.bin', reason: expect.stringMatching(/binary/) },
      {
        path: 'nope.py',
        reason: expect.stringMatching(/does not exist; to create it, use a block with an empty SEARCH/),
      },
    ]);
  });
});
