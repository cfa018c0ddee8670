import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  failureFiles,
  failureInsights,
  relevantSpans,
  viewFile,
  viewFiles,
} from '../../../src/steps/fix/file-views.js';
import { assembleFixerFiles } from '../../../src/steps/fix/fixer-context.js';
import { definitionsOfFiles } from '../../../src/locator/index.js';
import type { ValidatorOutput } from '../../../src/step-contract/index.js';

describe('how the inspector is shown files', () => {
  it('shows a small file whole, numbered; a large one as its outline plus the spans that match the request', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-views-'));
    try {
      writeFileSync(join(dir, 'small.py'), 'def add(a, b):\n    return a - b\n');
      const filler = (i: number) => `def helper_${i}(x):\n    """Helper number ${i}."""\n    return x + ${i}\n\n`;
      const big =
        `${Array.from({ length: 150 }, (_, i) => filler(i)).join('')}def parse_header(raw):\n    """Split a raw ` +
        `header line."""\n    name, _, value = raw.partition(':')\n    return name.strip(), value.strip()\n`;
      writeFileSync(join(dir, 'big.py'), big);

      const small = (await viewFile(dir, 'small.py', 'add subtracts', 10_000))!;
      expect(small).toMatchObject({ whole: true, lines: 3 });
      expect(small.text).toContain('    2|     return a - b');

      const large = (await viewFile(dir, 'big.py', 'parse_header drops the value after the colon', 20_000))!;
      expect(large.whole).toBe(false);
      expect(large.text).toContain('outline (bodies elided)');
      expect(large.text).toMatch(/\d+\| def helper_0\(x\):/); // a signature from the outline
      expect(large.text).toMatch(/lines \d+-\d+:\n[\s\S]*name, _, value = raw\.partition/); // the matching span, verbatim
      expect(large.text).not.toContain('Helper number 75.'); // bodies far from the request are elided
      expect(large.text.length).toBeLessThanOrEqual(20_000 + 20);
      expect(await viewFile(dir, 'missing.py', 'x', 1_000)).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('picks non-overlapping spans around the lines sharing the most words with the request', () => {
    const source = Array.from({ length: 100 }, (_, i) =>
      i === 10 || i === 80 ? 'token refresh expired' : `line ${i}`,
    ).join('\n');
    const spans = relevantSpans(source, 'the token refresh fails when expired');
    expect(spans).toEqual([
      { start: 1, end: 23 },
      { start: 69, end: 93 },
    ]);
  });

  it("adds a failed validation's test files and frame files that are regular files of the checkout, nothing else", () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-views-'));
    const outside = mkdtempSync(join(tmpdir(), 'emend-outside-'));
    try {
      mkdirSync(join(dir, 'tests'));
      writeFileSync(join(dir, 'tests/test_ops.py'), 'def test_mul():\n    assert False\n');
      writeFileSync(join(dir, 'ops.py'), 'def mul(a, b):\n    return a + b\n');
      writeFileSync(join(outside, 'secret.py'), 'TOKEN = 1\n');
      symlinkSync(join(outside, 'secret.py'), join(dir, 'linked.py'));
      const failure: ValidatorOutput = {
        command: 'pytest',
        setup: null,
        passed: false,
        new_failures: ['tests/test_ops.py::test_mul', 'tests/test_ops.py::test_add', 'x'],
        fixed: [],
        preexisting_failures: [],
        duration_ms: 1,
        log_tail: '',
        failure_details: [
          { test: 'tests/test_ops.py::test_mul', test_file: 'tests/test_ops.py', frame: { path: 'ops.py', line: 2 } },
          {
            test: 'tests/test_ops.py::test_add',
            test_file: 'tests/test_ops.py',
            frame: { path: 'linked.py', line: 1 },
          },
          { test: 'x', test_file: '../secret.py', frame: { path: 'missing.py', line: 1 } },
        ],
      };
      expect(failureFiles(dir, failure)).toEqual(['tests/test_ops.py', 'ops.py']);
      expect(failureFiles(dir, undefined)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(outside, { recursive: true, force: true });
    }
  });
});

describe("the inspector's views: spans snapped to definitions, whole lines, budget by rank", () => {
  /** 300 small functions, then `parse_header`, 40 lines long, whose middle matches the request. */
  function bigModule(tag: string): string {
    const helpers = Array.from({ length: 300 }, (_, i) => `def ${tag}_${i}(x):\n    return x + ${i}\n\n`).join('');
    const body = Array.from({ length: 18 }, (_, i) => `    step_${i} = raw  # step ${i}`);
    return (
      `${helpers}def parse_header(raw):\n${body.join('\n')}\n    name, _, value = raw.partition(':')\n` +
      `${body.join('\n')}\n    return name.strip(), value.strip()\n`
    );
  }

  it('shows the whole definition holding the matching line, and cuts only at line ends', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-views-'));
    try {
      const source = bigModule('h');
      writeFileSync(join(dir, 'big.py'), source);
      const lines = source.split('\n');
      const first = lines.indexOf('def parse_header(raw):') + 1;
      const view = (await viewFile(dir, 'big.py', 'partition drops the value', 6_000))!;
      expect(view.whole).toBe(false);
      // The span is the function, first line to last: not a window of 25 lines around the match.
      expect(view.text).toContain(`lines ${first}-${first + 38}:`);
      expect(view.text).toMatch(/\d+\| {5}return name\.strip\(\), value\.strip\(\)/);
      expect(view.text.length).toBeLessThanOrEqual(6_000);
      // The outline takes what the span leaves; it is cut at a line end, never mid-line.
      for (const line of view.text.split('\n'))
        expect(line === '' || /^ *\d*\| /.test(line) || /^(outline|lines|… \(cut\))/.test(line)).toBe(true);
      expect(view.text).toContain('… (cut)');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives the first-ranked file the larger share, not an even split', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-views-'));
    try {
      for (const name of ['a', 'b', 'c']) writeFileSync(join(dir, `${name}.py`), bigModule(name));
      const views = await viewFiles(dir, ['a.py', 'b.py', 'c.py'], 'partition drops the value', 15_000);
      expect(views.map((v) => v.path)).toEqual(['a.py', 'b.py', 'c.py']);
      const [a, b, c] = views.map((v) => v.text.length) as [number, number, number];
      expect(a).toBeGreaterThan(5_000); // more than an even third
      expect(a).toBeGreaterThan(c);
      expect(b).toBeGreaterThanOrEqual(3_000); // the later files keep their floor
      expect(a + b + c).toBeLessThanOrEqual(15_000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("a failed validation in the fixer's view", () => {
  it('shows the function each failing test stopped in and the test itself, whole, in long files', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'emend-views-'));
    try {
      mkdirSync(join(dir, 'tests'));
      const filler = (tag: string) =>
        Array.from({ length: 400 }, (_, i) => `def ${tag}_${i}(x):\n    return x + ${i}\n\n\n`).join('');
      const ops = `${filler('op')}def mul(a, b):\n    total = a\n    total = total + b\n    return total\n`;
      const test = `${filler('check')}def test_mul():\n    got = mul(2, 3)\n    assert got == 6\n`;
      writeFileSync(join(dir, 'ops.py'), ops);
      writeFileSync(join(dir, 'tests/test_ops.py'), test);
      const frameLine = ops.split('\n').indexOf('    total = total + b') + 1;
      const failure: ValidatorOutput = {
        command: 'pytest',
        setup: null,
        passed: false,
        new_failures: ['tests/test_ops.py::test_mul'],
        fixed: [],
        preexisting_failures: [],
        duration_ms: 1,
        log_tail: '',
        failure_details: [
          {
            test: 'tests/test_ops.py::test_mul',
            test_file: 'tests/test_ops.py',
            frame: { path: 'ops.py', line: frameLine },
          },
        ],
      };
      const paths = ['ops.py', 'tests/test_ops.py'];
      const insights = failureInsights(failure);
      expect(insights.map((i) => i.file)).toEqual(['ops.py', 'tests/test_ops.py']);
      const definitions = await definitionsOfFiles(dir, paths);
      // A budget far under the files' size: they are shown as outlines plus what the failure points at.
      const [opsView, testView] = assembleFixerFiles({ dir, paths, insights, definitions, budget: 8_000 });
      expect(opsView).toContain('def mul(a, b):\n    total = a\n    total = total + b\n    return total');
      expect(testView).toContain('def test_mul():\n    got = mul(2, 3)\n    assert got == 6');
      expect(opsView).not.toContain('return x + 200');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
