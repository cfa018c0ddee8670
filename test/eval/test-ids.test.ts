import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { jsIdPassed, parseJsId, reportedTests } from '../../src/eval/test-ids.js';

/**
 * The judge's reading of JavaScript runners' ids, on their real output (runner-output/: jest 29
 * with and without --verbose, mocha 10's spec reporter, vitest 1's verbose reporter, node 20's
 * TAP). Two files, test/math.test.js and test/other.test.js, each with a top-level test
 * "top level: with a colon" and a suite `math`/`other` › `add` › "adds two numbers" (passes),
 * "fails on purpose" (fails), and `math`/`other` › "multiplies" (passes).
 */
const output = (name: string) => readFileSync(new URL(`runner-output/${name}.txt`, import.meta.url), 'utf8');
const passedIn = (name: string) => {
  const run = reportedTests(output(name));
  return (id: string) => jsIdPassed(run, id);
};

describe('parseJsId', () => {
  it('reads a file, a file and a title (which may hold a colon), or a title alone', () => {
    expect(parseJsId('test/a.test.js')).toEqual({ file: 'test/a.test.js' });
    expect(parseJsId('tests/a.test.ts:should x: y')).toEqual({ file: 'tests/a.test.ts', title: 'should x: y' });
    expect(parseJsId('math add adds two numbers')).toEqual({ title: 'math add adds two numbers' });
    expect(parseJsId('top level: with a colon')).toEqual({ title: 'top level: with a colon' });
  });
});

describe('jest ids (file, or file and title)', () => {
  const passed = passedIn('jest');

  it('reads a title by its own name or its whole name, within its file', () => {
    expect(passed('test/math.test.js:adds two numbers')).toBe(true);
    expect(passed('test/math.test.js:math add adds two numbers')).toBe(true);
    expect(passed('test/math.test.js:math › add › adds two numbers')).toBe(true);
    expect(passed('test/math.test.js:fails on purpose')).toBe(false);
    expect(passed('test/other.test.js:top level: with a colon')).toBe(true);
  });

  it('a whole-file id passes only when every test of the file did', () => {
    expect(passed('test/math.test.js')).toBe(false);
    expect(passedIn('jest-plain')('test/math.test.js')).toBe(false);
  });

  it('an id the run does not report did not pass', () => {
    expect(passed('test/math.test.js:divides')).toBe(false);
    expect(passed('test/missing.test.js')).toBe(false);
    expect(passed('test/missing.test.js:adds two numbers')).toBe(false);
  });

  it('without --verbose jest names only failures: a passing title is not reported', () => {
    const plain = passedIn('jest-plain');
    expect(plain('test/math.test.js:adds two numbers')).toBe(false);
    expect(plain('test/math.test.js:fails on purpose')).toBe(false);
  });

  it('a file whose header says PASS passes as a whole, reported in each pass of a chained script', () => {
    const once = 'PASS test/a.test.js\n  ✓ works (2 ms)\n';
    expect(jsIdPassed(reportedTests(once), 'test/a.test.js')).toBe(true);
    expect(jsIdPassed(reportedTests(once), 'packages/x/test/a.test.js')).toBe(true);
    // the same file run twice (two time zones): it must pass both times
    const twice = `${once}\nFAIL test/a.test.js\n  ✕ works (2 ms)\n`;
    expect(jsIdPassed(reportedTests(twice), 'test/a.test.js')).toBe(false);
    expect(jsIdPassed(reportedTests(twice), 'test/a.test.js:works')).toBe(false);
    expect(jsIdPassed(reportedTests(`${once}\n${once}`), 'test/a.test.js:works')).toBe(true);
    // a suite that does not load fails as a whole
    const broken = `${once}\nFAIL test/b.test.js\n  ● Test suite failed to run\n\n    Cannot find module './b'\n`;
    expect(jsIdPassed(reportedTests(broken), 'test/b.test.js')).toBe(false);
    expect(jsIdPassed(reportedTests(broken), 'test/a.test.js')).toBe(true);
  });
});

describe('mocha titles, with or without their describe chain', () => {
  const passed = passedIn('mocha');

  it('reads the whole title (mocha joins it with spaces) or the test’s own', () => {
    expect(passed('math add adds two numbers')).toBe(true);
    expect(passed('math multiplies')).toBe(true);
    expect(passed('math add fails on purpose')).toBe(false);
    expect(passed('multiplies')).toBe(true);
  });

  it('a title reported twice passes only if it passed each time', () => {
    // "adds two numbers" passes in both suites; "fails on purpose" fails in both
    expect(passed('adds two numbers')).toBe(true);
    expect(passed('fails on purpose')).toBe(false);
    expect(passed('top level: with a colon')).toBe(true);
    const oneFails = '  a\n    ✔ same\n  b\n    1) same\n\n  1 passing\n  1 failing\n';
    expect(jsIdPassed(reportedTests(oneFails), 'same')).toBe(false);
    expect(jsIdPassed(reportedTests(oneFails), 'a same')).toBe(true);
  });

  it("reads an id as mocha's failure list wrote it: a ':' after the title, its spaces collapsed", () => {
    // eslint's data set ids: a rule tester's title is the code, spaces collapsed, with the list's ':'
    const run = reportedTests(
      '  key-spacing\n    valid\n      ✔ ({ foo :1,  bar :2 });\n    invalid\n      1) var x  = 1;\n\n  1 passing\n  1 failing\n',
    );
    expect(jsIdPassed(run, 'key-spacing valid ({ foo :1, bar :2 });:')).toBe(true);
    expect(jsIdPassed(run, 'key-spacing invalid var x = 1;:')).toBe(false);
    expect(jsIdPassed(run, 'key-spacing valid ({ foo :1, bar :3 });:')).toBe(false);
    // a title that ended in a newline is listed with a space before the ':'
    expect(jsIdPassed(run, 'key-spacing valid ({ foo :1,\n bar :2 });\n :')).toBe(true);
  });

  it('reads a long title a line-based harness cut at a line break, and only a long one', () => {
    const code = "start() .then(() => /* a comment here */ process.send('ready') ) .catch(err => { /* needed */";
    const run = reportedTests(
      `  implicit-arrow-linebreak\n    invalid\n      ✔ ${code}\n console.log(err) })\n      ✔ short one more\n\n  2 passing\n`,
    );
    expect(jsIdPassed(run, `implicit-arrow-linebreak invalid ${code}`)).toBe(true);
    // not in the middle of a word, and not a short title that starts another test's name
    expect(jsIdPassed(run, `implicit-arrow-linebreak invalid ${code.slice(0, -5)}`)).toBe(false);
    expect(jsIdPassed(run, 'short one')).toBe(false);
    const failing = reportedTests(`  rule\n    1) ${code}\n more })\n\n  0 passing\n  1 failing\n`);
    expect(jsIdPassed(failing, `rule ${code}`)).toBe(false);
  });

  it('reads `parent.title`: the test’s own group and its name joined by a dot', () => {
    const run = reportedTests(
      '  hljs\n    .C_NUMBER_RE\n      ✔ should match hex numbers\n  javascript\n    1) should markup class\n\n  1 passing\n  1 failing\n',
    );
    expect(jsIdPassed(run, '.C_NUMBER_RE.should match hex numbers')).toBe(true);
    expect(jsIdPassed(run, 'javascript.should markup class')).toBe(false);
    expect(jsIdPassed(run, 'hljs.should match hex numbers')).toBe(false);
  });
});

describe('vitest names (file > describe > test)', () => {
  const passed = passedIn('vitest');

  it('takes the file from the name', () => {
    expect(passed('test/math.test.js:adds two numbers')).toBe(true);
    expect(passed('test/math.test.js:math > add > adds two numbers')).toBe(true);
    expect(passed('test/math.test.js:fails on purpose')).toBe(false);
    expect(passed('test/math.test.js')).toBe(false);
    expect(passed('test/other.test.js:top level: with a colon')).toBe(true);
    expect(passed('math add multiplies')).toBe(false);
  });
});

describe('node:test names', () => {
  const passed = passedIn('node-tap');

  it('reads TAP subtests by their whole name or their own', () => {
    expect(passed('math add adds two numbers')).toBe(true);
    expect(passed('adds two numbers')).toBe(true);
    expect(passed('fails on purpose')).toBe(false);
    expect(passed('top level: with a colon')).toBe(true);
    expect(passed('divides')).toBe(false);
  });
});
