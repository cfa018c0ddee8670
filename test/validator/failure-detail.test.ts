import { describe, expect, it } from 'vitest';
import { MESSAGE_CHARS, newFailureDetails, repoFrame } from '../../src/test-runs/failure-detail.js';
import { normalizeOutput } from '../../src/environments/sandboxed.js';
import { parseOutput } from '../../src/test-runs/parse.js';

// Real runners' output (pytest 9, unittest on Python 3.11, node --test's TAP, vitest 4 with its
// colours stripped, jest and cargo as they print), captured in checkouts at /tmp/ff/…
const PYTEST = [
  '============================= test session starts ==============================',
  'collecting ... collected 3 items',
  '',
  'tests/test_ops.py::test_add FAILED                                       [ 33%]',
  'tests/test_ops.py::test_mul FAILED                                       [ 66%]',
  'tests/test_ops.py::TestJson::test_load FAILED                            [100%]',
  '',
  '=================================== FAILURES ===================================',
  '___________________________________ test_add ___________________________________',
  '',
  '    def test_add():',
  '>       assert add(2, 3) == 5',
  'E       assert -1 == 5',
  'E        +  where -1 = add(2, 3)',
  '',
  'tests/test_ops.py:6: AssertionError',
  '___________________________________ test_mul ___________________________________',
  '',
  '    def test_mul():',
  '>       assert mul(2, 3) == 6',
  'E       assert 5 == 6',
  'E        +  where 5 = mul(2, 3)',
  '',
  'tests/test_ops.py:10: AssertionError',
  '______________________________ TestJson.test_load ______________________________',
  '',
  'self = <tests.test_ops.TestJson object at 0x7f98d3bbaa10>',
  '',
  '    def test_load(self):',
  '>       json.loads("{")',
  '',
  'tests/test_ops.py:15: ',
  '_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ ',
  '/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py:346: in loads',
  '    return _default_decoder.decode(s)',
  '           ^^^^^^^^^^^^^^^^^^^^^^^^^^',
  '/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py:337: in decode',
  '    obj, end = self.raw_decode(s, idx=_w(s, 0).end())',
  '               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
  '_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ ',
  '',
  "self = <json.decoder.JSONDecoder object at 0x7f98d4af8dd0>, s = '{', idx = 0",
  '',
  '    def raw_decode(self, s, idx=0):',
  '        """Decode a JSON document from ``s`` (a ``str`` beginning with',
  '        a JSON document) and return a 2-tuple of the Python',
  '        representation and the index in ``s`` where the document ended.',
  '    ',
  '        This can be used to decode a JSON document from a string that may',
  '        have extraneous data at the end.',
  '    ',
  '        """',
  '        try:',
  '>           obj, end = self.scan_once(s, idx)',
  '                       ^^^^^^^^^^^^^^^^^^^^^^',
  'E           json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
  '',
  '/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py:353: JSONDecodeError',
  '=========================== short test summary info ============================',
  'FAILED tests/test_ops.py::test_add - assert -1 == 5',
  'FAILED tests/test_ops.py::test_mul - assert 5 == 6',
  'FAILED tests/test_ops.py::TestJson::test_load - json.decoder.JSONDecodeError:...',
  '============================== 3 failed in 2.49s ===============================',
].join('\n');

const UNITTEST = [
  'test_json (tests.test_u.OpsTest.test_json) ... ERROR',
  'test_mul (tests.test_u.OpsTest.test_mul) ... FAIL',
  '',
  '======================================================================',
  'ERROR: test_json (tests.test_u.OpsTest.test_json)',
  '----------------------------------------------------------------------',
  'Traceback (most recent call last):',
  '  File "/tmp/ff/calc/tests/test_u.py", line 11, in test_json',
  '    json.loads("{")',
  '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py", line 346, in loads',
  '    return _default_decoder.decode(s)',
  '           ^^^^^^^^^^^^^^^^^^^^^^^^^^',
  '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 337, in decode',
  '    obj, end = self.raw_decode(s, idx=_w(s, 0).end())',
  '               ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
  '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 353, in raw_decode',
  '    obj, end = self.scan_once(s, idx)',
  '               ^^^^^^^^^^^^^^^^^^^^^^',
  'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
  '',
  '======================================================================',
  'FAIL: test_mul (tests.test_u.OpsTest.test_mul)',
  '----------------------------------------------------------------------',
  'Traceback (most recent call last):',
  '  File "/tmp/ff/calc/tests/test_u.py", line 8, in test_mul',
  '    self.assertEqual(mul(2, 3), 6)',
  'AssertionError: 5 != 6',
  '',
  '----------------------------------------------------------------------',
  'Ran 2 tests in 0.001s',
  '',
  'FAILED (failures=1, errors=1)',
].join('\n');

const TAP = [
  'TAP version 13',
  '# Subtest: adds',
  'not ok 1 - adds',
  '  ---',
  '  duration_ms: 3.01952',
  "  location: '/tmp/ff/js/test/calc.test.js:4:1'",
  "  failureType: 'testCodeFailure'",
  '  error: |-',
  '    Expected values to be strictly equal:',
  '    ',
  '    0 !== 4',
  '    ',
  "  code: 'ERR_ASSERTION'",
  "  name: 'AssertionError'",
  '  expected: 4',
  '  actual: 0',
  "  operator: 'strictEqual'",
  '  stack: |-',
  '    TestContext.<anonymous> (/tmp/ff/js/test/calc.test.js:5:10)',
  '    Test.runInAsyncScope (node:async_hooks:206:9)',
  '    Test.run (node:internal/test_runner/test:796:25)',
  '    Test.processPendingSubtests (node:internal/test_runner/test:526:18)',
  '    node:internal/test_runner/harness:255:12',
  '    node:internal/process/task_queues:140:7',
  '    AsyncResource.runInAsyncScope (node:async_hooks:206:9)',
  '    AsyncResource.runMicrotask (node:internal/process/task_queues:137:8)',
  '  ...',
  '1..1',
  '# tests 1',
  '# suites 0',
  '# pass 0',
  '# fail 1',
  '# cancelled 0',
  '# skipped 0',
  '# todo 0',
  '# duration_ms 450.771638',
].join('\n');

const VITEST = [
  '⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯',
  '',
  ' FAIL  test/calc.test.ts > calc > adds',
  'AssertionError: expected +0 to be 4 // Object.is equality',
  '',
  '- Expected',
  '+ Received',
  '',
  '- 4',
  '+ 0',
  '',
  ' ❯ test/calc.test.ts:6:23',
  "      4| describe('calc', () => {",
  "      5|   it('adds', () => {",
  '      6|     expect(add(2, 2)).toBe(4);',
  '       |                       ^',
  '      7|   });',
  '      8| });',
  '',
  '⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯',
  '',
  '',
  ' Test Files  1 failed (1)',
].join('\n');

const JEST = [
  'FAIL test/calc.test.js',
  '  calc',
  '    ✕ adds (3 ms)',
  '',
  '  ● calc › adds',
  '',
  '    expect(received).toBe(expected) // Object.is equality',
  '',
  '    Expected: 4',
  '    Received: 0',
  '',
  "      3 | describe('calc', () => {",
  "      4 |   test('adds', () => {",
  '    > 5 |     expect(add(2, 2)).toBe(4);',
  '        |                       ^',
  '      6 |   });',
  '      7 | });',
  '',
  '      at Object.toBe (node_modules/expect/build/index.js:10:5)',
  '      at Object.<anonymous> (test/calc.test.js:5:23)',
  '',
  'Test Suites: 1 failed, 1 total',
  'Tests:       1 failed, 1 total',
].join('\n');

const CARGO = [
  'running 2 tests',
  'test tests::adds ... FAILED',
  'test tests::subs ... ok',
  '',
  'failures:',
  '',
  '---- tests::adds stdout ----',
  '',
  "thread 'tests::adds' panicked at src/lib.rs:12:9:",
  'assertion `left == right` failed',
  '  left: 0',
  ' right: 4',
  'note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace',
  '',
  '',
  'failures:',
  '    tests::adds',
  '',
  'test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s',
].join('\n');

const SPEC = [
  '✖ adds (1.848773ms)',
  '  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
  '  ',
  '  0 !== 4',
  '  ',
  '      at TestContext.<anonymous> (/tmp/ff/js/test/calc.test.js:5:10)',
  '      at Test.runInAsyncScope (node:async_hooks:206:9)',
  '      at Test.run (node:internal/test_runner/test:796:25)',
  '      at Test.processPendingSubtests (node:internal/test_runner/test:526:18)',
  '      at node:internal/test_runner/harness:255:12',
  '      at node:internal/process/task_queues:140:7',
  '      at AsyncResource.runInAsyncScope (node:async_hooks:206:9)',
  '      at AsyncResource.runMicrotask (node:internal/process/task_queues:137:8) {',
  '    generatedMessage: true,',
  "    code: 'ERR_ASSERTION',",
  '    actual: 0,',
  '    expected: 4,',
  "    operator: 'strictEqual'",
  '  }',
  '',
  'ℹ tests 1',
  'ℹ suites 0',
  'ℹ pass 0',
  'ℹ fail 1',
  'ℹ cancelled 0',
  'ℹ skipped 0',
  'ℹ todo 0',
  'ℹ duration_ms 133.946535',
  '',
  '✖ failing tests:',
  '',
  'test at test/calc.test.js:4:1',
  '✖ adds (1.848773ms)',
  '  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:',
  '  ',
  '  0 !== 4',
  '  ',
  '      at TestContext.<anonymous> (/tmp/ff/js/test/calc.test.js:5:10)',
  '      at Test.runInAsyncScope (node:async_hooks:206:9)',
  '      at Test.run (node:internal/test_runner/test:796:25)',
  '      at Test.processPendingSubtests (node:internal/test_runner/test:526:18)',
  '      at node:internal/test_runner/harness:255:12',
  '      at node:internal/process/task_queues:140:7',
  '      at AsyncResource.runInAsyncScope (node:async_hooks:206:9)',
  '      at AsyncResource.runMicrotask (node:internal/process/task_queues:137:8) {',
  '    generatedMessage: true,',
  "    code: 'ERR_ASSERTION',",
  '    actual: 0,',
  '    expected: 4,',
  "    operator: 'strictEqual'",
  '  }',
].join('\n');

// vitest's whole output: the run's tree line for the test, then the same "Failed Tests" block.
const VITESTFULL = [
  '',
  '',
  ' × test/calc.test.ts > calc > adds 6ms',
  '   → expected +0 to be 4 // Object.is equality',
  '',
  VITEST,
  '      Tests  1 failed (1)',
  '',
].join('\n');

const PYTEST_COLLECTION = [
  '============================= test session starts ==============================',
  'collecting ... collected 3 items / 1 error',
  '',
  '==================================== ERRORS ====================================',
  '____________________ ERROR collecting tests/test_broken.py _____________________',
  "ImportError while importing test module '/tmp/ff/calc/tests/test_broken.py'.",
  'Hint: make sure your test modules/packages have valid Python names.',
  'Traceback:',
  '/root/.pyenv/versions/3.11.7/lib/python3.11/importlib/__init__.py:126: in import_module',
  '    return _bootstrap._gcd_import(name[level:], package, level)',
  '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
  'tests/test_broken.py:1: in <module>',
  '    import missing_mod',
  "E   ModuleNotFoundError: No module named 'missing_mod'",
  '=========================== short test summary info ============================',
  'ERROR tests/test_broken.py',
  '!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!',
  '=============================== 1 error in 1.04s ===============================',
].join('\n');

const details = (output: string, root: string) => parseOutput(normalizeOutput(output, [root])).details;

describe('failing tests told by their message and innermost frame in the repository', () => {
  it('pytest: the E lines, the last frame in the checkout (not the json module), by node id', () => {
    const got = details(PYTEST, '/tmp/ff/calc');
    expect(got.get('tests/test_ops.py::test_mul')).toEqual({
      message: 'assert 5 == 6\n+  where 5 = mul(2, 3)',
      frame: { path: 'tests/test_ops.py', line: 10 },
    });
    // The exception was raised in the standard library: the frame is the test's call into it.
    expect(got.get('tests/test_ops.py::TestJson::test_load')).toEqual({
      message:
        'json.decoder.JSONDecodeError: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)',
      frame: { path: 'tests/test_ops.py', line: 15 },
    });
    expect(got.get('tests/test_ops.py::test_add')?.message).toBe('assert -1 == 5\n+  where -1 = add(2, 3)');
  });

  it('pytest: a module that does not import (--tb=short), named by its path; the importlib frame skipped', () => {
    expect(details(PYTEST_COLLECTION, '/tmp/ff/calc').get('tests/test_broken.py')).toEqual({
      message: "ModuleNotFoundError: No module named 'missing_mod'",
      frame: { path: 'tests/test_broken.py', line: 1 },
    });
  });

  it('unittest: the exception line after the traceback, the innermost frame in the checkout', () => {
    const got = details(UNITTEST, '/tmp/ff/calc');
    expect(got.get('tests.test_u.OpsTest.test_mul')).toEqual({
      message: 'AssertionError: 5 != 6',
      frame: { path: 'tests/test_u.py', line: 8 },
    });
    expect(got.get('tests.test_u.OpsTest.test_json')).toEqual({
      message: expect.stringMatching(/^json\.decoder\.JSONDecodeError: Expecting property name/),
      frame: { path: 'tests/test_u.py', line: 11 },
    });
  });

  it("node --test (TAP): the YAML's error block, the first stack frame that is not node's, the file from location", () => {
    expect(details(TAP, '/tmp/ff/js').get('adds')).toEqual({
      message: 'Expected values to be strictly equal:\n\n0 !== 4',
      frame: { path: 'test/calc.test.js', line: 5 },
      file: 'test/calc.test.js',
    });
  });

  it('vitest: the error and its diff above the ❯ frame; the test file from the id', () => {
    expect(details(VITEST, '/tmp/ff/vt').get('test/calc.test.ts > calc > adds')).toEqual({
      message: 'AssertionError: expected +0 to be 4 // Object.is equality\n\n- Expected\n+ Received\n\n- 4\n+ 0',
      frame: { path: 'test/calc.test.ts', line: 6 },
      file: 'test/calc.test.ts',
    });
  });

  it("node --test's spec reporter: the error under the ✖ line, the first frame that is not node's", () => {
    expect(details(SPEC, '/tmp/ff/js').get('adds')).toEqual({
      message: 'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n0 !== 4',
      frame: { path: 'test/calc.test.js', line: 5 },
    });
  });

  it("vitest's verbose run: the summary's fuller report wins over the tree's one-line → message", () => {
    expect(details(VITESTFULL, '/tmp/ff/vt').get('test/calc.test.ts > calc > adds')).toEqual({
      message: 'AssertionError: expected +0 to be 4 // Object.is equality\n\n- Expected\n+ Received\n\n- 4\n+ 0',
      frame: { path: 'test/calc.test.ts', line: 6 },
      file: 'test/calc.test.ts',
    });
  });

  it('jest: the message above the code excerpt, the first frame outside node_modules, the FAIL file', () => {
    expect(details(JEST, '/repo').get('calc › adds')).toEqual({
      message: 'expect(received).toBe(expected) // Object.is equality\n\nExpected: 4\nReceived: 0',
      frame: { path: 'test/calc.test.js', line: 5 },
      file: 'test/calc.test.js',
    });
  });

  it('cargo: the panic message and its place', () => {
    expect(details(CARGO, '/repo').get('tests::adds')).toEqual({
      message: 'assertion `left == right` failed\n  left: 0\n right: 4',
      frame: { path: 'src/lib.rs', line: 12 },
    });
  });

  it('frames outside the checkout are no frames: packages, the library, the runner, absolute paths', () => {
    for (const path of [
      '.venv/lib/python3.11/site-packages/requests/api.py',
      'node_modules/expect/build/index.js',
      '/usr/lib/python3.11/json/decoder.py',
      'node:internal/test_runner/test',
      '<frozen importlib._bootstrap>',
      '../elsewhere/x.py',
      'lib/_pytest/python.py',
    ])
      expect(repoFrame(path, 3), path).toBeUndefined();
    expect(repoFrame('file://src/a.js', 3)).toEqual({ path: 'src/a.js', line: 3 });
  });

  it('the report is bounded: new failures only, at most 30, messages cut, the test file from the id', () => {
    const long = 'x'.repeat(2_000);
    const ids = Array.from({ length: 40 }, (_, i) => `tests/test_${i}.py::test_it`);
    const got = newFailureDetails(['(run) exited with code 1', ...ids], new Map([[ids[0]!, { message: long }]]));
    expect(got).toHaveLength(30);
    expect(got[0]).toEqual({ test: ids[0], test_file: 'tests/test_0.py', message: long });
    const parsed = details(PYTEST.replace('assert 5 == 6', `assert ${long}`), '/tmp/ff/calc');
    expect(parsed.get('tests/test_ops.py::test_mul')!.message!.length).toBe(MESSAGE_CHARS);
  });
});
