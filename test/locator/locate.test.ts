import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { locate } from '../../src/locator/index.js';
import { stackFrames } from '../../src/locator/rank.js';
import { extractSymbols } from '../../src/locator/symbols.js';
import { cliEnv, killAll, runCli } from '../cli/cli-process.js';
import { type Files, commitAll, fixtureRepo, removeFixtureRepos, writeFiles } from '../support/fixture-repos.js';

// A small Python package in the layout of the benchmark's repositories: source, tests, docs.
const PACKAGE: Files = {
  'README.md': '# shop\nA shop library: carts, prices, tax and discounts.\n',
  'shop/__init__.py': 'from .cart import Cart\n',
  'shop/cart.py':
    'from .pricing import apply_discount\n\nclass Cart:\n    def __init__(self):\n        self.items = ' +
    '[]\n\n    def add(self, item, price):\n        self.items.append((item, price))\n\n    def ' +
    'total(self):\n        return sum(p for _, p in self.items)\n',
  'shop/pricing.py':
    'def apply_discount(total, percent):\n    """Reduce the total price by a discount percent."""\n    return ' +
    'total - total * percent / 100\n\ndef round_price(value):\n    return round(value, 2)\n',
  'shop/tax.py':
    'RATES = {"de": 19, "fr": 20}\n\ndef compute_tax(total, country):\n    """The tax on a total price for a ' +
    'country."""\n    return total * RATES[country] / 100\n',
  'shop/util/strings.py': 'def slugify(text):\n    return text.lower().replace(" ", "-")\n',
  'tests/test_pricing.py':
    'from shop.pricing import apply_discount\n\ndef test_discount_price():\n    assert apply_discount(100, 10) ' +
    '== 90\n\ndef test_discount_price_zero():\n    assert apply_discount(100, 0) == 100\n',
  'tests/test_tax.py': 'from shop.tax import compute_tax\n\ndef test_tax():\n    assert compute_tax(100, "de") == 19\n',
};

describe('the deterministic locator', { timeout: 60_000 }, () => {
  let cacheDir: string;
  beforeAll(() => {
    cacheDir = mkdtempSync(join(tmpdir(), 'emend-locator-cache-'));
  });
  afterAll(async () => {
    await killAll();
    removeFixtureRepos();
    rmSync(cacheDir, { recursive: true, force: true });
  });

  it('finds definitions by language', async () => {
    expect(extractSymbols('a.py', 'class Foo(Base):\n    async def bar(self):\n        pass\n')).toEqual([
      'Foo',
      'bar',
    ]);
    expect(
      extractSymbols(
        'a.ts',
        'export function foo() {}\nexport class Bar {\n  baz(x: number): void {\n  }\n}\nconst qux = 1;\n',
      ),
    ).toEqual(expect.arrayContaining(['foo', 'Bar', 'baz', 'qux']));
    expect(
      extractSymbols('a.go', 'func (s *Server) Serve() error {\n}\nfunc main() {}\ntype Server struct{}\n'),
    ).toEqual(['Serve', 'main', 'Server']);
    expect(extractSymbols('a.rs', 'pub struct Cache;\nimpl Cache {\n    pub fn get(&self) {}\n}\n')).toEqual(
      expect.arrayContaining(['Cache', 'get']),
    );
    expect(
      extractSymbols(
        'A.java',
        'public class Api {\n    public static int count(String s) {\n        return 0;\n    }\n}\n',
      ),
    ).toEqual(['Api', 'count']);
  });

  it('reads Python, Node and Go stack frames', async () => {
    const frames = stackFrames(
      'Traceback:\n  File "/usr/lib/python3/site-packages/shop/tax.py", line 4, in compute_tax\n    at run ' +
        '(src/app.js:10:5)\nmain.go:12 +0x1d',
    );
    expect(frames).toEqual([
      { file: '/usr/lib/python3/site-packages/shop/tax.py', line: 4 },
      { file: 'src/app.js', line: 10 },
      { file: 'main.go', line: 12 },
    ]);
  });

  it('ranks the file of a stack trace first', async () => {
    const repo = fixtureRepo(PACKAGE);
    const prompt =
      'Checkout crashes with a KeyError for the price total:\n\nTraceback (most recent call last):\n  File ' +
      '"/home/u/venv/lib/python3.11/site-packages/shop/tax.py", line 5, in compute_tax\n    return total * ' +
      "RATES[country] / 100\nKeyError: 'it'\n";
    const out = await locate(repo.dir, prompt);
    expect(out.files[0]?.path).toBe('shop/tax.py');
    expect(out.files[0]?.reasons.join('\n')).toContain('stack trace');
  });

  it('brings the file defining a symbol named in the prompt to the top', async () => {
    const repo = fixtureRepo(PACKAGE);
    const out = await locate(
      repo.dir,
      'The total is wrong after calling `round_price` on a cart total with many items.',
    );
    expect(out.files[0]?.path).toBe('shop/pricing.py');
    expect(out.files[0]?.reasons.join('\n')).toMatch(/defines round_price/);
  });

  it('ignores a pasted dependency listing: a package named like a definition is not a named symbol', async () => {
    const repo = fixtureRepo(PACKAGE);
    const listing = [
      'Package    Version',
      '---------- -------',
      'slugify    4.0.1',
      'strings    0.1.0',
      'tax        2.1.0',
    ];
    const out = await locate(repo.dir, `Cart total is wrong after adding items\n\n${listing.join('\n')}\n`);
    expect(out.files[0]?.path).toBe('shop/cart.py');
    const reasons = out.files.flatMap((f) => f.reasons).join('\n');
    expect(reasons).not.toMatch(/slugify|"strings"|"tax"/);
    expect(out.files.map((f) => f.path)).not.toContain('shop/util/strings.py');
  });

  it("demotes the title's match of documentation and configuration with them: the sources rank first", async () => {
    // A package's description and README repeat the title's words; without their title match demoted
    // once more, both outranked src/legend.js (0.894 and 0.875 against 0.841).
    const repo = fixtureRepo({
      'package.json': JSON.stringify(
        {
          name: 'charts',
          version: '1.0.0',
          description: 'Charts with legends: dashed lines supported',
          keywords: ['chart', 'legend', 'dashed', 'lines'],
        },
        null,
        2,
      ),
      'README.md':
        '# charts\n\nDraw charts. Every legend shows its series; dashed lines are supported in the legend.\n',
      'src/legend.js':
        'function drawLegend(ctx, series) {\n  for (const s of series) {\n    ctx.setLineDash(s.dash || []);\n' +
        '    ctx.strokeText(s.name);\n  }\n}\nmodule.exports = { drawLegend };\n',
      'src/axis.js':
        'function drawAxis(ctx, scale) {\n  ctx.moveTo(0, 0);\n  ctx.lineTo(scale.width, 0);\n}\nmodule.exports = { drawAxis };\n',
      'src/lines.js':
        'function drawLine(ctx, points, dashed) {\n  if (dashed) ctx.setLineDash([4, 2]);\n  ctx.stroke();\n}\n' +
        'module.exports = { drawLine };\n',
    });
    const out = await locate(
      repo.dir,
      'Dashed lines not supported in the legend\n\nThe legend draws every line solid.',
    );
    expect(out.files.slice(0, 2).map((f) => f.path)).toEqual(['src/lines.js', 'src/legend.js']);
    const pkg = out.files.find((f) => f.path === 'package.json');
    expect(pkg?.reasons.join('\n')).toContain("the title's terms match");
  });

  it('demotes test files unless the prompt is about tests', async () => {
    const repo = fixtureRepo(PACKAGE);
    const plain = await locate(
      repo.dir,
      'The discount price is off: a discount of 10 percent on 100 gives the wrong price.',
      { top: 20 },
    );
    expect(plain.files[0]?.path).toBe('shop/pricing.py');
    const demoted = plain.files.find((f) => f.path === 'tests/test_pricing.py');
    expect(demoted?.reasons.join('\n')).toContain('test file, demoted');
    const aboutTests = await locate(
      repo.dir,
      'Add a test for the discount price: the tests do not cover a discount of zero percent.',
      { top: 20 },
    );
    expect(aboutTests.files[0]?.path).toBe('tests/test_pricing.py');
    expect(aboutTests.files[0]?.reasons.join('\n')).not.toContain('demoted');
  });

  it('matches frames of an installed copy to a src-layout checkout, and ignores ambiguous bare file names', async () => {
    const repo = fixtureRepo({
      'src/shop/__init__.py': '',
      'src/shop/tax.py': 'def compute_tax(total, country):\n    return total * RATES[country]\n',
      'src/shop/cart.py': 'class Cart:\n    def total(self):\n        return 0\n',
      'tests/a/util.py': 'def helper():\n    pass\n',
      'tests/b/util.py': 'def helper():\n    pass\n',
    });
    const prompt =
      'Crash on checkout\n\n```\nTraceback (most recent call last):\n  File "/home/u/app/util.py", line 3, in ' +
      'run\n  File "/opt/venv/lib/python3.11/site-packages/shop/cart.py", line 3, in total\n  File ' +
      '"/opt/venv/lib/python3.11/site-packages/shop/tax.py", line 2, in compute_tax\nKeyError: \'it\'\n```\n';
    const out = await locate(repo.dir, prompt);
    expect(out.files.slice(0, 2).map((f) => f.path)).toEqual(['src/shop/tax.py', 'src/shop/cart.py']);
    expect(out.files[0]?.reasons.join('\n')).toContain('innermost frame');
    expect(out.files.find((f) => f.path.endsWith('util.py'))?.reasons.join('\n') ?? '').not.toContain('stack trace');
  });

  it(
    "ranks a file defining Container.member named in the prompt first; names the prompt's own code defines do " +
      'not count',
    async () => {
      const repo = fixtureRepo({
        'lib/session.py': 'class Session:\n    def send(self, request):\n        return request\n',
        'lib/adapters.py': 'class HTTPAdapter:\n    def send(self, request):\n        return request\n',
        'lib/helpers.py': 'def make_request():\n    return None\n',
      });
      const out = await locate(repo.dir, 'Calling `HTTPAdapter.send` twice drops the request headers');
      expect(out.files[0]?.path).toBe('lib/adapters.py');
      expect(out.files[0]?.reasons.join('\n')).toContain('defines HTTPAdapter.send');
      const own = await locate(
        repo.dir,
        'My code breaks:\n\n```python\ndef make_request():\n    return lib.go()\n```\n',
      );
      expect(own.files.find((f) => f.path === 'lib/helpers.py')?.reasons.join('\n') ?? '').not.toContain(
        'defines make_request',
      );
    },
  );

  it('indexes definitions with tree-sitter: a TypeScript method named in the prompt', async () => {
    const repo = fixtureRepo({
      'src/queue.ts':
        'export class JobQueue {\n  private items: string[] = [];\n  drainPending(limit: number): string[] ' +
        '{\n    return this.items.splice(0, limit);\n  }\n}\n',
      'src/other.ts': 'export const pending = 1;\nexport function limit() { return 2; }\n',
      'README.md': 'Queue: drain pending jobs with a limit.\n',
    });
    const out = await locate(repo.dir, 'drainPending ignores the limit');
    expect(out.files[0]?.path).toBe('src/queue.ts');
    expect(out.files[0]?.reasons.join('\n')).toMatch(/defines drainPending/);
  });

  it('caches the index per commit: a second call on the same commit does not rebuild, a new commit does', async () => {
    const repo = fixtureRepo(PACKAGE);
    const prompt = 'compute_tax fails for Italy';
    const first = await locate(repo.dir, prompt, { cacheDir });
    expect(first.timings).toMatchObject({ cache: 'miss', built: true });
    const second = await locate(repo.dir, prompt, { cacheDir });
    expect(second.timings).toMatchObject({ cache: 'hit', built: false });
    expect(second.files).toEqual(first.files);
    // Names that Object.prototype has are ordinary words for an index read back from JSON.
    expect(
      (await locate(repo.dir, 'the constructor() and toString() of hasOwnProperty __proto__', { cacheDir })).timings
        .cache,
    ).toBe('hit');

    // A dirty tree is indexed as it stands, not cached.
    writeFiles(repo.dir, { 'shop/shipping.py': 'def compute_shipping(weight):\n    return weight * 2\n' });
    const dirty = await locate(repo.dir, 'compute_shipping', { cacheDir });
    expect(dirty.timings).toMatchObject({ cache: 'off', built: true });
    expect(dirty.files[0]?.path).toBe('shop/shipping.py');

    commitAll(repo.dir, 'shipping');
    const next = await locate(repo.dir, 'compute_shipping', { cacheDir });
    expect(next.timings).toMatchObject({ cache: 'miss', built: true });
    expect(next.files[0]?.path).toBe('shop/shipping.py');
    expect((await locate(repo.dir, 'compute_shipping', { cacheDir })).timings.cache).toBe('hit');
    expect(readdirSync(cacheDir).filter((f) => f.endsWith('.json'))).toHaveLength(2);
  });

  it('indexes a directory that is not a git checkout, skipping node_modules and binaries', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-locator-plain-'));
    try {
      writeFiles(dir, {
        'src/server.ts': 'export function startServer() {}\n',
        'node_modules/x/index.js': 'function startServer() {}\n',
      });
      writeFileSync(join(dir, 'src/logo.ts'), Buffer.from([0x89, 0x50, 0x00, 0x01]));
      const out = await locate(dir, 'startServer hangs', { cacheDir });
      expect(out.files.map((f) => f.path)).toEqual(['src/server.ts']);
      expect(out.timings.cache).toBe('off');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('emend locate --json prints the ranking', async () => {
    const repo = fixtureRepo(PACKAGE);
    const promptFile = join(cacheDir, 'prompt.txt');
    writeFileSync(promptFile, 'apply_discount gives a negative price');
    const exit = await runCli(
      ['locate', '--repo', repo.dir, '--prompt-file', promptFile, '--top', '2', '--json'],
      cliEnv({ EMEND_LOCATOR_CACHE_DIR: cacheDir }),
    );
    expect(exit.code, exit.stderr).toBe(0);
    const out = JSON.parse(exit.stdout);
    expect(Object.keys(out)).toEqual(['files']);
    expect(out.files).toHaveLength(2);
    expect(out.files[0]).toEqual({ path: 'shop/pricing.py', score: expect.any(Number), reasons: expect.any(Array) });
    for (const f of out.files) expect(Object.keys(f)).toEqual(['path', 'score', 'reasons']);

    const text = await runCli(
      ['locate', '--repo', repo.dir, '--prompt-file', promptFile],
      cliEnv({ EMEND_LOCATOR_CACHE_DIR: cacheDir }),
    );
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^ {2}1\. shop\/pricing\.py {2}\d/);
    expect((await runCli(['locate', '--repo', repo.dir], cliEnv({}))).code).toBe(2);
  });
});
