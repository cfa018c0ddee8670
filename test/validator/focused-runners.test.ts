import { describe, expect, it } from 'vitest';
import { ValidatorOutput } from '../../src/step-contract/fix.js';
import { validate } from '../../src/validator/validate.js';
import { type Files, fixtureRepo } from '../support/fixture-repos.js';
import { recordingSandbox } from '../support/recording-sandbox.js';
import { onlineProjects } from '../support/setup-network.js';

/*
 * The focused pass (docs/validator.md, "The focused pass") with real mocha, jest and vitest, each
 * installed from the npm registry through the egress proxy once (a small pinned version; the file's
 * environment cache shares the install between its validations), run in the real bubblewrap
 * sandbox. What ran is read from the sandbox's record of its commands, and from the tests the
 * verdict counts.
 */

interface Runner {
  name: string;
  devDependencies: Record<string, string>;
  script: string;
  /** A test file's head: how it gets `describe`, `it` and an assertion, and how it loads a module. */
  head: (modules: string) => string;
  load: (module: string, names: string) => string;
  /** The module syntax of src/. */
  exports: (body: Record<string, string>) => string;
  type?: 'module';
  /** How many tests the whole suite has. */
  suite: number;
  /** The runner reads a file argument as a part of a path (vitest). */
  substrings?: true;
}

const cjsExports = (body: Record<string, string>) =>
  Object.entries(body)
    .map(([name, fn]) => `exports.${name} = ${fn};\n`)
    .join('');

const MOCHA: Runner = {
  name: 'mocha',
  devDependencies: { mocha: '10.8.2' },
  script: 'mocha',
  head: (modules) => `const assert = require('node:assert');\n${modules}`,
  load: (module, names) => `const { ${names} } = require('${module}');\n`,
  exports: cjsExports,
  // mocha's default spec, ./test/*.{js,cjs,mjs}, leaves legacy/ out.
  suite: 4,
};

const JEST: Runner = {
  name: 'jest',
  devDependencies: { jest: '29.7.0' },
  script: 'jest',
  head: (modules) => `const assert = require('node:assert');\n${modules}`,
  load: (module, names) => `const { ${names} } = require('${module}');\n`,
  exports: cjsExports,
  suite: 5,
};

const VITEST: Runner = {
  name: 'vitest',
  devDependencies: { vitest: '1.6.1' },
  script: 'vitest run',
  type: 'module',
  head: (modules) => `import assert from 'node:assert';\nimport { describe, it } from 'vitest';\n${modules}`,
  load: (module, names) => `import { ${names} } from '${module}';\n`,
  exports: (body) =>
    Object.entries(body)
      .map(([name, fn]) => `export const ${name} = ${fn};\n`)
      .join(''),
  suite: 5,
  substrings: true,
};

const MATH = { add: '(a, b) => a + b', mul: '(a, b) => a * b' };

/** A project of three test files: math's, words', and one that reads src/math.js as text (imports nothing). */
function project(r: Runner): Files {
  const sizeTest =
    r.type === 'module'
      ? `import { readFileSync } from 'node:fs';\n${r.head('')}` +
        "describe('size', () => { it('math stays small', () => assert.ok(readFileSync(new URL('../src/math.js', import.meta.url), 'utf8').length < 100)); });\n"
      : `const { readFileSync } = require('node:fs');\n${r.head('')}` +
        "describe('size', () => { it('math stays small', () => assert.ok(readFileSync(__dirname + '/../src/math.js', 'utf8').length < 100)); });\n";
  return {
    'package.json': JSON.stringify({
      name: `${r.name}-focused`,
      version: '1.0.0',
      private: true,
      ...(r.type ? { type: r.type } : {}),
      scripts: { test: r.script },
      devDependencies: r.devDependencies,
    }),
    'src/math.js': r.exports(MATH),
    'src/words.js': r.exports({ upper: '(s) => s.toUpperCase()' }),
    'test/math.test.js':
      r.head(r.load('../src/math.js', 'add, mul')) +
      "describe('math', () => {\n  it('adds', () => assert.strictEqual(add(2, 3), 5));\n  it('multiplies', () => assert.strictEqual(mul(2, 3), 6));\n});\n",
    'test/words.test.js':
      r.head(r.load('../src/words.js', 'upper')) +
      "describe('words', () => { it('uppers', () => assert.strictEqual(upper('a'), 'A')); });\n",
    'test/size.test.js': sizeTest,
    // The same file name under another directory: a runner that reads `test/words.test.js` as a
    // part of a path (vitest) would run this too.
    'legacy/test/words.test.js': `${r.head('')}describe('legacy words', () => { it('still uppers', () => assert.ok(true)); });\n`,
  };
}

for (const runner of [MOCHA, JEST, VITEST]) {
  describe(`the focused pass with ${runner.name}`, { timeout: 240_000 }, () => {
    const online = onlineProjects(`https://git.example/${runner.name}-focused`);
    const base = project(runner);

    async function run(change: Files, lastFailures: { id: string; file?: string }[], extra: Files = {}) {
      const repo = fixtureRepo({ ...base, ...extra }, change);
      const recorded = recordingSandbox(online.sandbox());
      const out = await validate(
        recorded.sandbox,
        { dir: repo.dir, base: repo.base },
        { environments: online.environments(), pass: 'focused', lastFailures },
      );
      expect(out.setup, out.log_tail).toMatchObject({ exit_code: 0 });
      expect(ValidatorOutput.parse(JSON.parse(JSON.stringify(out)))).toEqual(out);
      return { out, tests: recorded.runs.filter((r) => r.command.includes('npm test')) };
    }

    it('runs only the files the change touches, and gives their failing verdict without the whole suite', async () => {
      const { out, tests } = await run({ 'src/math.js': runner.exports({ ...MATH, mul: '(a, b) => a + b' }) }, [
        { id: 'words uppers', file: 'test/words.test.js' },
      ]);
      // Under vitest, `test/words.test.js` would run legacy/test/words.test.js too: it is left out.
      const words = runner.substrings ? [] : [{ path: 'test/words.test.js', reason: 'failed last time' }];
      expect(out, out.log_tail).toMatchObject({
        pass: 'focused',
        passed: false,
        focus: { files: [...words, { path: 'test/math.test.js', reason: 'imports a changed module' }], passed: false },
        // The chosen files' tests and no other (not size's, not legacy's), on both trees.
        tests: { passed: 1 + words.length, failed: 1, skipped: 0 },
        baseline: { failures: [], tests: 2 + words.length },
      });
      expect(out.new_failures).toHaveLength(1);
      expect(out.new_failures[0]).toMatch(/multiplies/);
      expect(out.message).toContain(
        `focused pass: ${1 + words.length} test file(s) the change touches first failed, so the whole suite was not run`,
      );
      // The focused command, on each tree (and again for the suspect new failure), and no other test run.
      expect(out.focus?.command).toBe(out.command);
      expect(out.command).toMatch(
        runner.substrings ? / 'test\/math\.test\.js'$/ : / 'test\/words\.test\.js' 'test\/math\.test\.js'$/,
      );
      if (runner.name === 'jest') expect(out.command).toContain(' --runTestsByPath ');
      expect(tests.length).toBeGreaterThanOrEqual(2);
      expect(new Set(tests.map((t) => t.tree))).toEqual(new Set(['baseline', 'change']));
      for (const t of tests) expect(t.command).toContain(out.command);
      expect(out.log_tail).not.toMatch(/math stays small|still uppers/);
    });

    it('goes on to the whole suite when the focused pass passes', async () => {
      const { out, tests } = await run(
        {
          'src/math.js': `${runner.exports(MATH)}// a comment that makes this module larger than its size test allows, which only the whole suite sees\n`,
        },
        [],
      );
      expect(out, out.log_tail).toMatchObject({
        pass: 'full',
        passed: false,
        focus: { files: [{ path: 'test/math.test.js', reason: 'imports a changed module' }], passed: true },
        tests: { passed: runner.suite - 1, failed: 1, skipped: 0 },
        baseline: { failures: [], tests: runner.suite },
      });
      expect(out.new_failures).toHaveLength(1);
      expect(out.new_failures[0]).toMatch(/math stays small/);
      expect(out.message).toContain(
        'focused pass: 1 test file(s) the change touches first passed; the whole suite ran',
      );
      const focusedCommand = out.focus?.command ?? '';
      expect(focusedCommand).toMatch(/ 'test\/math\.test\.js'$/);
      const focused = tests.filter((t) => t.command.includes(focusedCommand));
      const whole = tests.filter((t) => !t.command.includes("'test/"));
      expect(focused.map((t) => t.tree).sort()).toEqual(['baseline', 'change']);
      expect(whole.length).toBe(tests.length - 2);
      expect(new Set(whole.map((t) => t.tree))).toEqual(new Set(['baseline', 'change']));
    });

    if (runner === MOCHA)
      it('leaves the files to the whole suite when .mocharc names its own spec, which mocha adds to them', async () => {
        // Checked with this mocha: `mocha test/math.test.js` with this .mocharc runs every file.
        const rc = { '.mocharc.json': JSON.stringify({ spec: ['test/*.test.js', 'legacy/test/*.test.js'] }) };
        const { out, tests } = await run(
          { 'src/math.js': runner.exports({ ...MATH, mul: '(a, b) => a + b' }) },
          [],
          rc,
        );
        expect(out, out.log_tail).toMatchObject({ pass: 'full', passed: false, tests: { passed: 4, failed: 1 } });
        expect(out.focus).toBeUndefined();
        expect(out.message).toContain(
          "no focused pass: mocha's configuration (.mocharc.json) names its own test files: more files would add to them",
        );
        expect(tests.length).toBeGreaterThanOrEqual(2);
        for (const t of tests) expect(t.command).not.toContain("'test/");
      });
  });
}
