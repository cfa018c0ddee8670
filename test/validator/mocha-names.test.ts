import { describe, expect, it } from 'vitest';
import { validate } from '../../src/validator/validate.js';
import { type Files, fixtureRepo } from '../support/fixture-repos.js';
import { onlineProjects } from '../support/setup-network.js';

// mocha run by a script the validator cannot add flags to, with a reporter that names no passing
// test (eslint's `node Makefile.js test` chooses `progress`): the preloaded names still say which
// test a change breaks and which it fixes. mocha from the npm registry through the proxy, once.

const project = (math: string): Files => ({
  'package.json': JSON.stringify({
    name: 'mocha-dots',
    version: '1.0.0',
    private: true,
    scripts: { test: 'node run-tests.js' },
    devDependencies: { mocha: '10.8.2' },
  }),
  // The script runs mocha itself, with the dot reporter, as a Makefile would, and exits the moment
  // the run ends, as old mochas did (the names must be out by then, not in a pipe's buffer).
  'run-tests.js':
    "const Mocha = require('mocha');\n" +
    "const mocha = new Mocha({ reporter: 'dot' });\n" +
    "mocha.addFile('test/math.test.js');\nmocha.addFile('test/many.test.js');\n" +
    'mocha.run((failures) => process.exit(failures ? 1 : 0));\n',
  'src/math.js': math,
  // Two thousand more tests with long names: a block of the names larger than a pipe's buffer.
  'test/many.test.js':
    "describe('many', () => { for (let i = 0; i < 2000; i++) it('case ' + i + ' ' + 'x'.repeat(200), () => {}); });\n",
  'test/math.test.js': `const assert = require('node:assert');
const { add, sub } = require('../src/math');
describe('math', () => {
  it('adds two numbers', () => assert.strictEqual(add(2, 3), 5));
  describe('sub', () => {
    it('subtracts two numbers', () => assert.strictEqual(sub(5, 3), 2));
  });
});
`,
});

const RIGHT = 'exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n';
const WRONG_SUB = 'exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a + b;\n';

describe('mocha with a reporter that names no passing test', { timeout: 240_000 }, () => {
  const online = onlineProjects('https://git.example/mocha-dots');
  const sandbox = () => online.sandbox();
  const environments = () => online.environments();

  it('names every test by its groups, the one a change breaks and the one it fixes', async () => {
    const broken = fixtureRepo(project(RIGHT), { 'src/math.js': WRONG_SUB });
    const out = await validate(sandbox(), { dir: broken.dir, base: broken.base }, { environments: environments() });
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out, out.log_tail).toMatchObject({
      passed: false,
      new_failures: ['math › sub › subtracts two numbers'],
      tests: { passed: 2001, failed: 1, skipped: 0 },
      baseline: { failures: [], tests: 2002 },
    });
    const fixing = fixtureRepo(project(WRONG_SUB), { 'src/math.js': RIGHT });
    const fixed = await validate(sandbox(), { dir: fixing.dir, base: fixing.base }, { environments: environments() });
    expect(fixed).toMatchObject({ passed: true, fixed: ['math › sub › subtracts two numbers'], new_failures: [] });
  });
});
