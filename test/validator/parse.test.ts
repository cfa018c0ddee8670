import { describe, expect, it } from 'vitest';
import { normalizeOutput } from '../../src/environments/sandboxed.js';
import { parseOutput } from '../../src/test-runs/parse.js';

// Runner outputs as the runners print them (trimmed to what matters). No database, no sandbox.
const statuses = (output: string) => Object.fromEntries(parseOutput(output).tests);

describe('test output parsers', () => {
  it("reads an old mocha's double-spaced spec report: a test's groups are still the lines above it", () => {
    // As mocha 5 printed PrismJS's suite through npm: a blank line after every line.
    const out = [
      '> prismjs@1.15.0 test',
      '> mocha tests/testrunner-tests.js && mocha tests/run.js',
      '',
      '',
      '',
      '  The token stream transformer',
      '',
      '    ✓ should handle nested structures',
      '',
      '    ✓ should strip empty tokens',
      '',
      "  Testing language 'sql'",
      '',
      "    ✓ – should pass test case 'boolean_feature' (122ms)",
      '',
      "    1) – should pass test case 'string_feature'",
      '',
      "    ✓ – should pass test case 'variable_feature'",
      '',
      '',
      '  4 passing (4s)',
      '  1 failing',
      '',
    ].join('\n');
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'The token stream transformer › should handle nested structures': 'passed',
      'The token stream transformer › should strip empty tokens': 'passed',
      "Testing language 'sql' › – should pass test case 'boolean_feature'": 'passed',
      "Testing language 'sql' › – should pass test case 'string_feature'": 'failed',
      "Testing language 'sql' › – should pass test case 'variable_feature'": 'passed',
    });
  });

  it('reads node --test TAP: nested names, suites not counted, YAML details explained, console.assert as a marker', () => {
    const out = `TAP version 13
# Assertion failed: c is wrong
# Subtest: A passes
ok 1 - A passes
  ---
  duration_ms: 1.8
  ...
# Subtest: B fails
not ok 2 - B fails
  ---
  duration_ms: 1.8
  failureType: 'testCodeFailure'
  error: |-
    Expected values to be strictly equal:
  name: 'AssertionError'
  ...
# Subtest: suite
    # Subtest: nested ok
    ok 1 - nested ok
      ---
      duration_ms: 0.3
      ...
    # Subtest: nested bad
    not ok 2 - nested bad
      ---
      error: 'boom'
      ...
    1..2
not ok 3 - suite
  ---
  failureType: 'subtestsFailed'
  ...
# Subtest: skipped one
ok 4 - skipped one # SKIP not today
1..4
# fail 2`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'A passes': 'passed',
      'B fails': 'failed',
      'suite > nested ok': 'passed',
      'suite > nested bad': 'failed',
      'skipped one': 'skipped',
    });
    // The AssertionError inside B's details is B's; the console.assert line is no test's.
    expect(parsed.markers).toEqual(['(output) Assertion failed: c is wrong']);
  });

  it('names the test still open when TAP output stops (the one hanging at a timeout)', () => {
    const parsed = parseOutput('TAP version 13\n# Subtest: fast\nok 1 - fast\n# Subtest: slow\n');
    expect(parsed.running).toBe('slow');
  });

  it('reads pytest -v -rA, its collection errors, and the node id it was running when cut off', () => {
    const out = `============================= test session starts ==============================
collecting ... collected 5 items

test_x.py::test_a PASSED                                                 [ 20%]
test_x.py::test_b FAILED                                                 [ 40%]
test_x.py::test_d SKIPPED (nope)                                         [ 60%]
test_x.py::test_p[2] FAILED                                              [ 80%]

=================================== FAILURES ===================================
____________________________________ test_b ____________________________________

>   def test_b(): assert 1 == 2
E   assert 1 == 2

test_x.py:3: AssertionError
=========================== short test summary info ============================
PASSED test_x.py::test_a
SKIPPED [1] test_x.py:5: nope
FAILED test_x.py::test_b - assert 1 == 2
FAILED test_x.py::test_p[2] - assert 2 == 1
ERROR test_bad.py
==================== 2 failed, 1 passed, 1 skipped, 1 error in 0.06s ====================`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'test_x.py::test_a': 'passed',
      'test_x.py::test_b': 'failed',
      'test_x.py::test_d': 'skipped',
      'test_x.py::test_p[2]': 'failed',
      'test_bad.py': 'failed',
    });
    expect(parsed.markers).toEqual([]);
    const hung = parseOutput(
      'test_h.py::test_a PASSED  [ 33%]\ntest_h.py::test_hang Timeout (0:00:02)!\nThread 0x01 (most recent ' +
        'call first):\n',
    );
    expect(hung.running).toBe('test_h.py::test_hang');
  });

  it('reads unittest -v, with docstring lines and the FAIL/ERROR blocks', () => {
    const out = `test_err (test_y.T.test_err) ... ERROR
test_fail (test_y.T.test_fail)
Docstring here. ... FAIL
test_ok (test_y.T) ... ok
test_skip (test_y.T.test_skip) ... skipped 'why'

======================================================================
FAIL: test_fail (test_y.T.test_fail)
----------------------------------------------------------------------
Traceback (most recent call last):
AssertionError: 1 != 2

----------------------------------------------------------------------
Ran 4 tests in 0.001s

FAILED (failures=1, errors=1, skipped=1)`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'test_y.T.test_err': 'failed',
      'test_y.T.test_fail': 'failed',
      'test_y.T.test_ok': 'passed',
      'test_y.T.test_skip': 'skipped',
    });
    expect(parsed.markers).toEqual([]);
  });

  it('reads jest --verbose with its failure headers', () => {
    const out = `FAIL src/math.test.js
  math
    ✓ adds (2 ms)
    ✕ subtracts (3 ms)
  ○ skipped later

  ● math › subtracts

    expect(received).toBe(expected) // Object.is equality
    AssertionError: nope

Test Suites: 1 failed, 1 total
Tests:       1 failed, 1 skipped, 1 passed, 3 total`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'math › adds': 'passed',
      'math › subtracts': 'failed',
      later: 'skipped',
    });
    expect(parsed.markers).toEqual([]);
  });

  it('reads mocha’s spec reporter', () => {
    const out = `
  math
    ✔ adds
    1) subtracts

  1 passing (5ms)
  1 failing

  1) math
       subtracts:
      AssertionError [ERR_ASSERTION]: 8 == 2
      at Context.<anonymous> (test/math.test.js:9:12)
`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({ 'math › adds': 'passed', 'math › subtracts': 'failed' });
    expect(parsed.markers).toEqual([]);
  });

  it('reads vitest’s verbose reporter and its failure summary as the same ids', () => {
    const out = ` RUN  v1.6.0 /workspace/repo

 ✓ test/math.test.ts > math > adds 1ms
 × test/math.test.ts > math > subtracts 3ms
   → expected 8 to be 2

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/math.test.ts > math > subtracts
AssertionError: expected 8 to be 2
 ❯ test/math.test.ts:9:22

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'test/math.test.ts > math > adds': 'passed',
      'test/math.test.ts > math > subtracts': 'failed',
    });
    expect(parsed.markers).toEqual([]);
  });

  it('reads no group from the warnings node prints between vitest’s lines', () => {
    // vitest 1.6 on node 20.19 and later, as printed (stderr and stdout in one log).
    const warning = `(node:15) Warning: Accessing non-existent property 'parseConfig' of module exports inside circular dependency
(Use \`node --trace-warnings ...\` to show where the warning was created)`;
    const out = ` RUN  v1.6.1 /workspace/repo

${warning}
 ✓ test/math.test.js > math > adds
 × test/math.test.js > math > multiplies
   → 5 !== 6

(node:15) [DEP0040] DeprecationWarning: The \`punycode\` module is deprecated.
${warning}
 ✓ test/words.test.js > words > uppers

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/math.test.js > math > multiplies
AssertionError: 5 !== 6
 ❯ test/math.test.js:6:33

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 2 passed (3)`;
    expect(Object.fromEntries(parseOutput(out).tests)).toEqual({
      'test/math.test.js > math > adds': 'passed',
      'test/math.test.js > math > multiplies': 'failed',
      'test/words.test.js > words > uppers': 'passed',
    });
  });

  it('names a vitest failure once when the default reporter’s tree leaves out its suites', () => {
    // vitest 4.1's default reporter (a `test` script chaining vitest with other commands), as printed.
    const out = ` RUN  v4.1.12 /tmp/vt

 ❯ test/a.test.ts (4 tests | 2 failed) 8ms
     ✓ keeps 1ms
     × should concat 4ms
       × types 1ms
   ✓ top level 0ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/a.test.ts > defu > should concat
AssertionError: expected [ 1, 2 ] to deeply equal [ 2, 1 ]
 ❯ test/a.test.ts:4:44

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/2]⎯

 FAIL  test/a.test.ts > defu > deep > types
AssertionError: expected 1 to be 2 // Object.is equality
 ❯ test/a.test.ts:5:61

 Test Files  1 failed (1)
      Tests  2 failed | 2 passed (4)`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'test/a.test.ts > keeps': 'passed',
      'test/a.test.ts > defu > should concat': 'failed',
      'test/a.test.ts > defu > deep > types': 'failed',
      'test/a.test.ts > top level': 'passed',
    });
    expect(parsed.details.get('test/a.test.ts > defu > should concat')).toMatchObject({
      frame: { path: 'test/a.test.ts', line: 4 },
    });
  });

  it('keeps a tree failure the summary names in two suites under both ids', () => {
    const out = ` ❯ test/b.test.ts (2 tests | 2 failed) 8ms
     × same 4ms
     × same 1ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 2 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  test/b.test.ts > one > same
 FAIL  test/b.test.ts > two > same

 Test Files  1 failed (1)`;
    expect([...parseOutput(out).tests.keys()].sort()).toEqual([
      'test/b.test.ts > one > same',
      'test/b.test.ts > same',
      'test/b.test.ts > two > same',
    ]);
  });

  it('reads go test -json: subtests over parents, package failures, the test running at -timeout', () => {
    const ev = (o: Record<string, unknown>) => JSON.stringify({ Time: '2026-01-01T00:00:00Z', ...o });
    const out = [
      ev({ Action: 'run', Package: 'ex/calc', Test: 'TestAdd' }),
      ev({ Action: 'pass', Package: 'ex/calc', Test: 'TestAdd', Elapsed: 0 }),
      ev({
        Action: 'output',
        Package: 'ex/calc',
        Test: 'TestSub/negative',
        Output: '    calc_test.go:12: got 8, want 2\n',
      }),
      ev({ Action: 'fail', Package: 'ex/calc', Test: 'TestSub/negative' }),
      ev({ Action: 'fail', Package: 'ex/calc', Test: 'TestSub' }),
      ev({ Action: 'skip', Package: 'ex/calc', Test: 'TestLater' }),
      ev({ Action: 'fail', Package: 'ex/calc' }),
      '# ex/broken',
      './broken.go:3:1: syntax error: non-declaration statement outside function body',
      ev({ Action: 'fail', Package: 'ex/broken' }),
      ev({ Action: 'output', Package: 'ex/slow', Test: 'TestHang', Output: 'panic: test timed out after 5s\n' }),
      ev({ Action: 'output', Package: 'ex/slow', Test: 'TestHang', Output: '\trunning tests:\n' }),
      ev({ Action: 'output', Package: 'ex/slow', Test: 'TestHang', Output: '\t\tTestHang (5s)\n' }),
      ev({ Action: 'fail', Package: 'ex/slow' }),
    ].join('\n');
    expect(statuses(out)).toEqual({
      'ex/calc TestAdd': 'passed',
      'ex/calc TestSub/negative': 'failed',
      'ex/calc TestLater': 'skipped',
      'ex/broken (package)': 'failed',
      'ex/slow TestHang': 'failed',
    });
  });

  it('reads go test -v text', () => {
    const out = `=== RUN   TestAdd
--- PASS: TestAdd (0.00s)
=== RUN   TestSub
    calc_test.go:12: got 8, want 2
--- FAIL: TestSub (0.00s)
    calc_test.go:13: AssertionError-like detail
FAIL
FAIL\tex/calc\t0.002s`;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({ TestAdd: 'passed', TestSub: 'failed' });
  });

  it('reads cargo test, with the failures section explained', () => {
    const out = `running 3 tests
test tests::adds ... ok
test tests::subtracts ... FAILED
test tests::later ... ignored

failures:

---- tests::subtracts stdout ----
thread 'tests::subtracts' panicked at src/lib.rs:10:9:
assertion \`left == right\` failed
  left: 8
 right: 2

failures:
    tests::subtracts

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s

error: test failed, to rerun pass \`--lib\``;
    const parsed = parseOutput(out);
    expect(Object.fromEntries(parsed.tests)).toEqual({
      'tests::adds': 'passed',
      'tests::subtracts': 'failed',
      'tests::later': 'skipped',
    });
    expect(parsed.markers).toEqual([]);
  });

  it('reads Maven Surefire 2 and 3 failure lines, and Gradle test events', () => {
    const maven = `[INFO] Running com.example.AppTest
[ERROR] Tests run: 3, Failures: 2, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! - in com.example.AppTest
[ERROR] testB(com.example.AppTest)  Time elapsed: 0.01 s  <<< FAILURE!
java.lang.AssertionError: expected:<1> but was:<2>
\tat org.junit.Assert.fail(Assert.java:89)
[ERROR] com.example.AppTest.testC -- Time elapsed: 0.010 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <1> but was: <2>
[INFO]
[ERROR] Failures:
[ERROR]   AppTest.testB:12 expected:<1> but was:<2>
[INFO] BUILD FAILURE`;
    const parsedMaven = parseOutput(maven);
    expect(Object.fromEntries(parsedMaven.tests)).toEqual({
      'com.example.AppTest.testB': 'failed',
      'com.example.AppTest.testC': 'failed',
    });
    expect(parsedMaven.markers).toEqual([]);
    const gradle = `AppTest > testA PASSED

AppTest > testB FAILED
    java.lang.AssertionError at AppTest.java:12

2 tests completed, 1 failed

FAILURE: Build failed with an exception.
BUILD FAILED in 3s`;
    const parsedGradle = parseOutput(gradle);
    expect(Object.fromEntries(parsedGradle.tests)).toEqual({
      'AppTest > testA': 'passed',
      'AppTest > testB': 'failed',
    });
    expect(parsedGradle.markers).toEqual([]);
  });

  it(
    'finds failure markers no report accounts for, with what varies between runs blanked; a ✗ line is a failing ' +
      'test',
    () => {
      const parsed = parseOutput(
        [
          'checks done',
          'Assertion failed: add(2, 2) is 4',
          "thread 'main' panicked at src/main.rs:3:5",
          'AssertionError at 2026-11-22T10:00:00.123Z after 12 ms',
          '',
          '  ✗ something broke',
          'not ok - by hand',
          'all FAILED',
          'everything is fine',
        ].join('\n'),
      );
      expect(parsed.markers.sort()).toEqual(
        [
          '(output) Assertion failed: add(2, 2) is 4',
          "(output) thread 'main' panicked at src/main.rs:3:5",
          '(output) AssertionError at <time> after <duration>',
          '(output) not ok - by hand',
          '(output) all FAILED',
        ].sort(),
      );
      expect(Object.fromEntries(parsed.tests)).toEqual({ 'something broke': 'failed' });
    },
  );

  it('reads karma’s progress and dots reporters: a failing test by its full name without the browser, its error and frame, and the summaries explained', () => {
    // Captured from karma 6.4.4 (progress, the default reporter) with karma-mocha in the sandbox's
    // Chromium, colours and cursor moves as karma prints them.
    const ESC = '\x1b';
    const progress = [
      '> karmafx@1.0.0 test',
      '> karma start karma.conf.js',
      '',
      `${ESC}[32m29 11 2026 02:14:30.237:INFO [karma-server]: ${ESC}[39mKarma v6.4.4 server started at http://localhost:9876/`,
      `${ESC}[32m29 11 2026 02:14:32.873:INFO [Chrome Headless 156.0.0.0 (Linux 0.0.0)]: ${ESC}[39mConnected on socket 2y8ynvP3_KaVbcrVAAAA with id 60240600`,
      'Chrome Headless 156.0.0.0 (Linux 0.0.0): Executed 0 of 2 SUCCESS (0 secs / 0 secs)',
      `${ESC}[1A${ESC}[2KChrome Headless 156.0.0.0 (Linux 0.0.0): Executed 1 of 2 SUCCESS (0 secs / 0 secs)`,
      `${ESC}[1A${ESC}[2KChrome Headless 156.0.0.0 (Linux 0.0.0) math sub subtracts two numbers FAILED`,
      '\tError: sub(5, 3) is 8',
      '\t    at Context.<anonymous> (test/math.test.js:4:68)',
      'Chrome Headless 156.0.0.0 (Linux 0.0.0): Executed 2 of 2 (1 FAILED) (0 secs / 0.007 secs)',
      `${ESC}[1A${ESC}[2KChrome Headless 156.0.0.0 (Linux 0.0.0): Executed 2 of 2 (1 FAILED) (0.047 secs / 0.007 secs)`,
      'TOTAL: 1 FAILED, 1 SUCCESS',
      '',
    ].join('\n');
    const run = parseOutput(normalizeOutput(progress, []));
    expect(Object.fromEntries(run.tests)).toEqual({ 'math sub subtracts two numbers': 'failed' });
    expect(run.markers).toEqual([]);
    expect(run.details.get('math sub subtracts two numbers')).toEqual({
      message: 'Error: sub(5, 3) is 8',
      frame: { path: 'test/math.test.js', line: 4 },
    });
    // All passing: nothing named, nothing read as a failure.
    const passing = parseOutput(
      normalizeOutput(
        'Chrome Headless 156.0.0.0 (Linux 0.0.0): Executed 2 of 2 SUCCESS (0.034 secs / 0 secs)\nTOTAL: 2 SUCCESS\n',
        [],
      ),
    );
    expect([...passing.tests]).toEqual([]);
    expect(passing.markers).toEqual([]);
    // dots, two browsers (the same test once), an older Chrome's name, a frame karma left as a served path
    const dots = [
      '..',
      'HeadlessChrome 0.0.0 (Linux x86_64) Parser parses a heading FAILED',
      "\tExpected 'h2' to be 'h1'.",
      '\t    at <Jasmine>',
      '\t    at UserContext.<anonymous> (/workspace/repo/test/parser.spec.js:12:22)',
      'Firefox 115.0 (Ubuntu 0.0.0) Parser parses a heading FAILED',
      "\tExpected 'h2' to be 'h1'.",
      '..',
      'HeadlessChrome 0.0.0 (Linux x86_64): Executed 4 of 4 (1 FAILED) (skipped 1) (0.1 secs / 0.02 secs)',
    ].join('\n');
    const both = parseOutput(normalizeOutput(dots, ['/workspace/repo']));
    expect(Object.fromEntries(both.tests)).toEqual({ 'Parser parses a heading': 'failed' });
    expect(both.details.get('Parser parses a heading')).toEqual({
      message: "Expected 'h2' to be 'h1'.",
      frame: { path: 'test/parser.spec.js', line: 12 },
    });
    expect(both.markers).toEqual([]);
  });

  it('reads the names block of emend’s Karma reporter: passing and skipped tests by name, a failure once with the progress line’s id', () => {
    const output = [
      'Chrome Headless 156.0.0.0 (Linux 0.0.0) import - associations should import  data association FAILED',
      '\tError: expected 0 to equal 1',
      'TOTAL: 1 FAILED, 2 SUCCESS',
      '',
      'emend: karma tests by name',
      '✓ features/modeling - BpmnRules groups should resize Group',
      '✗ import - associations should import data association',
      '○ import - associations should import later',
      '✓ draw renders',
      '',
    ].join('\n');
    const run = parseOutput(output);
    expect(Object.fromEntries(run.tests)).toEqual({
      'features/modeling - BpmnRules groups should resize Group': 'passed',
      'import - associations should import data association': 'failed',
      'import - associations should import later': 'skipped',
      'draw renders': 'passed',
    });
    expect(run.markers).toEqual([]);
  });

  it('makes paths relative to the checkout, whichever copy ran', () => {
    expect(
      normalizeOutput('\x1b[31mnot ok 1 - /workspace/repo/test/a.js\x1b[0m\r\n/tmp/x/change/repo/b.js', [
        '/workspace/repo',
        '/tmp/x/change/repo',
      ]),
    ).toBe('not ok 1 - test/a.js\nb.js');
  });
});
