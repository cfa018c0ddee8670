import { describe, expect, it } from 'vitest';
import { selectTests, statusOf } from '../../src/eval/judge.js';
import type { TestRecipe } from '../../src/environments/detect.js';

const recipe = (over: Partial<TestRecipe>): TestRecipe => ({
  runner: 'unittest',
  source: 'detected',
  command: 'python3 -m unittest discover -v',
  perTest: { kind: 'none' },
  setup: null,
  ...over,
});

describe('selectTests', () => {
  it('runs pytest on the files of pytest ids, whatever runner the files suggested', () => {
    const ids = ['test_requests.py::T::test_a', 'tests/b.py::test_b[x y]', 'test_requests.py::T::test_c'];
    expect(selectTests(recipe({}), ids)).toMatchObject({
      runner: 'pytest',
      command: "python3 -m pytest 'test_requests.py' 'tests/b.py'",
      perTest: { kind: 'pytest' },
    });
    expect(selectTests(undefined, ids)?.command).toBe("python3 -m pytest 'test_requests.py' 'tests/b.py'");
  });

  it('keeps the detected environment: its install and the repository’s .emend/setup run before pytest', () => {
    const install = { command: 'python3 -m venv "$HOME/.venv" && "$HOME/.venv/bin/python" -m pip install -e .' };
    const detected = recipe({
      runner: 'pytest',
      command: 'python3 -m pytest',
      setup: install,
      extraSetup: ['sh .emend/setup'],
    });
    expect(selectTests(detected, ['tests/a.py::test_a'])).toMatchObject({
      command: "python3 -m pytest 'tests/a.py'",
      setup: install,
      extraSetup: ['sh .emend/setup'],
    });
    expect(selectTests(undefined, ['tests/a.py::test_a'])?.setup).toBeNull();
  });

  it("keeps the repository's own command (.emend/test) and runners without per-id selection", () => {
    const own = recipe({ source: 'repo-file', command: 'make check' });
    expect(selectTests(own, ['a.py::test_a'])).toBe(own);
    const node = recipe({ runner: 'node', command: 'npm test', perTest: { kind: 'node-test' } });
    expect(selectTests(node, ['adds', 'multiplies'])).toBe(node);
    expect(selectTests(undefined, ['adds'])).toBeUndefined();
  });

  it('quotes a file name for the shell', () => {
    expect(selectTests(undefined, ["it's.py::test_a"])?.command).toBe(`python3 -m pytest 'it'\\''s.py'`);
  });
});

describe('statusOf', () => {
  const tests = new Map([
    ['t.py::test_a', 'passed'],
    ['t.py::test_p[f("x", "y")-1]', 'passed'],
    ['t.py::test_p[f("x", "y", )-1]', 'passed'],
    ['t.py::test_q[a b]', 'passed'],
    ['t.py::test_q[a c]', 'failed'],
    ['t.py::test_s', 'skipped'],
  ]);
  const passed = statusOf(tests);

  it('reads an exact id, and a skipped or absent one as not passed', () => {
    expect(passed('t.py::test_a')).toBe(true);
    expect(passed('t.py::test_s')).toBe(false);
    expect(passed('t.py::test_gone')).toBe(false);
  });

  it('reads an id cut at a space (as the SWE-bench data lists them) by every test it stands for', () => {
    expect(passed('t.py::test_p[f("x",')).toBe(true);
    expect(passed('t.py::test_q[a')).toBe(false);
    expect(passed('t.py::test_p[f("x"')).toBe(false);
  });
});
