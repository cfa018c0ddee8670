import { describe, expect, it } from 'vitest';
import { validate } from '../../src/validator/validate.js';
import { type Files, fixtureRepo } from '../support/fixture-repos.js';
import { onlineProjects } from '../support/setup-network.js';

// A jasmine project (as markedjs/marked's): jasmine's own reporter prints a dot per spec and
// names only failures; the validator's helper names every spec, so a fix and a break are both
// seen by name. jasmine from the npm registry through the egress proxy, once (the cache).

const project = (math: string, jasmine = '3.10.0'): Files => ({
  'package.json': JSON.stringify({
    name: 'jasmine-fixture',
    version: '1.0.0',
    private: true,
    scripts: { test: 'jasmine --config=jasmine.json' },
    devDependencies: { jasmine },
  }),
  'jasmine.json': JSON.stringify({ spec_dir: 'spec', spec_files: ['**/*.spec.js'], random: true }),
  'src/math.js': math,
  'spec/math.spec.js': `const { add, sub } = require('../src/math');
describe('math', () => {
  it('adds two numbers', () => expect(add(2, 3)).toBe(5));
  describe('sub', () => {
    it('subtracts two numbers', () => expect(sub(5, 3)).toBe(2));
  });
});
`,
});

const RIGHT = 'exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n';
const WRONG_SUB = 'exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a + b;\n';

describe('a jasmine project', { timeout: 240_000 }, () => {
  const online = onlineProjects('https://git.example/jasmine-fixture');
  const sandbox = () => online.sandbox();
  const environments = () => online.environments();

  it('names the spec a change breaks and the one it fixes, by their full names', async () => {
    const broken = fixtureRepo(project(RIGHT), { 'src/math.js': WRONG_SUB });
    const out = await validate(sandbox(), { dir: broken.dir, base: broken.base }, { environments: environments() });
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out.command).toMatch(/^npm test -- --helper=\/workspace\/emend\/emend-jasmine-specs\.js$/);
    expect(out, out.log_tail).toMatchObject({
      passed: false,
      new_failures: ['math sub subtracts two numbers'],
      tests: { passed: 1, failed: 1, skipped: 0 },
      baseline: { failures: [], tests: 2 },
    });
    // jasmine's own report is still there
    expect(out.log_tail).toMatch(/2 specs, 1 failure/);

    const fixing = fixtureRepo(project(WRONG_SUB), { 'src/math.js': RIGHT });
    const fixed = await validate(sandbox(), { dir: fixing.dir, base: fixing.base }, { environments: environments() });
    expect(fixed).toMatchObject({ passed: true, fixed: ['math sub subtracts two numbers'], new_failures: [] });
  });

  it('loads the helper with --require under jasmine 4, whose --helper crashes before 4.6', async () => {
    const broken = fixtureRepo(project(RIGHT, '4.1.0'), { 'src/math.js': WRONG_SUB });
    const out = await validate(sandbox(), { dir: broken.dir, base: broken.base }, { environments: environments() });
    expect(out.command).toBe('npm test -- --require=/workspace/emend/emend-jasmine-specs.js');
    expect(out, out.log_tail).toMatchObject({
      passed: false,
      new_failures: ['math sub subtracts two numbers'],
      tests: { passed: 1, failed: 1, skipped: 0 },
    });
  });
});
