import { describe, expect, it } from 'vitest';
import { validate } from '../../src/validator/validate.js';
import { type Files, fixtureRepo, fixtureSandbox, writeFiles } from '../support/fixture-repos.js';
import { onlineProjects } from '../support/setup-network.js';

// Tests that run in a browser (docs/environments.md, "Browsers"): a Karma project whose
// karma.conf asks for ChromeHeadless and nothing else (no --no-sandbox of its own), set up from
// the npm registry through the egress proxy once (the environment cache lays the one install
// into every tree), its tests run in the system's Chromium inside the sandbox.

const KARMA_CONF = `module.exports = (config) => {
  config.set({
    frameworks: ['mocha'],
    files: ['src/*.js', 'test/*.js'],
    browsers: ['ChromeHeadless'],
    singleRun: true,
  });
};
`;

const MATH = 'function add(a, b) { return a + b; }\nfunction sub(a, b) { return a - b; }\n';

const karmaProject = (): Files => ({
  'package.json': JSON.stringify(
    {
      name: 'karma-fixture',
      version: '1.0.0',
      private: true,
      scripts: { test: 'karma start karma.conf.js' },
      devDependencies: {
        karma: '6.4.4',
        'karma-chrome-launcher': '3.2.0',
        'karma-mocha': '2.0.1',
        mocha: '10.8.2',
      },
    },
    null,
    2,
  ),
  'karma.conf.js': KARMA_CONF,
  'src/math.js': MATH,
  'test/math.test.js': `describe('math', () => {
  it('adds two numbers', () => { if (add(2, 3) !== 5) throw new Error('add(2, 3) is ' + add(2, 3)); });
  describe('sub', () => {
    it('subtracts two numbers', () => { if (sub(5, 3) !== 2) throw new Error('sub(5, 3) is ' + sub(5, 3)); });
  });
});
`,
});

describe('tests that run in a browser', { timeout: 240_000 }, () => {
  const online = onlineProjects('https://git.example/karma-fixture', 512 * 1024 * 1024);

  it('runs a Karma project’s ChromeHeadless tests in the sandbox’s Chromium and names the test a change breaks', async () => {
    const sandbox = online.sandbox();
    const environments = online.environments();
    const repo = fixtureRepo(karmaProject(), {
      'src/math.js': 'function add(a, b) { return a + b; }\nfunction sub(a, b) { return a + b; }\n',
    });
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base }, { environments });
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out).toMatchObject({
      passed: false,
      runner: 'node',
      new_failures: ['math sub subtracts two numbers'],
      preexisting_failures: [],
    });
    expect(out.failure_details?.[0]).toMatchObject({
      test: 'math sub subtracts two numbers',
      message: 'Error: sub(5, 3) is 8',
      frame: { path: 'test/math.test.js', line: 4 },
    });

    // A harmless change of the same base passes, on the same install (from the cache).
    writeFiles(repo.dir, { 'src/math.js': `// arithmetic\n${MATH}` });
    const fine = await validate(sandbox, { dir: repo.dir, base: repo.base }, { environments });
    expect(fine.setup?.environment?.cache).toBe('hit');
    expect(fine).toMatchObject({ passed: true, new_failures: [], preexisting_failures: [] });
    expect(sandbox.report().browser).toBe('/opt/emend/chromium');
  });

  it('runs a Karma project configured for a browser that is not here (PhantomJS, its launcher never downloaded) in the sandbox’s Chromium, naming passing tests too', async () => {
    const sandbox = online.sandbox();
    const environments = online.environments();
    // As many projects' configurations do: Chrome from Puppeteer (whose download setup skips), a
    // PhantomJS launcher that throws when Karma loads it, and a watching run unless told otherwise.
    const phantomConf = `process.env.CHROME_BIN = '/nonexistent/puppeteer/chrome';
module.exports = (config) => {
  config.set({
    frameworks: ['mocha'],
    files: ['src/*.js', 'test/*.js'],
    plugins: ['karma-*', require('path').join(__dirname, 'vendor/karma-phantomjs-launcher.js')],
    browsers: ['PhantomJS'],
    singleRun: false,
    autoWatch: true,
  });
};
`;
    const files = {
      ...karmaProject(),
      'karma.conf.js': phantomConf,
      'vendor/karma-phantomjs-launcher.js':
        'throw new TypeError(\'The "path" argument must be of type string. Received type object\');\n',
    };
    const repo = fixtureRepo(files, {
      'src/math.js': 'function add(a, b) { return a + b; }\nfunction sub(a, b) { return a + b; }\n',
    });
    const out = await validate(sandbox, { dir: repo.dir, base: repo.base }, { environments });
    expect(out.setup).toMatchObject({ exit_code: 0 });
    expect(out).toMatchObject({
      passed: false,
      new_failures: ['math sub subtracts two numbers'],
      preexisting_failures: [],
      // Passing tests are named (Karma's own progress reporter names failures only).
      tests: { passed: 1, failed: 1, skipped: 0 },
    });
    expect(out.log_tail).toContain(
      'emend: karma plugin vendor/karma-phantomjs-launcher.js left out: it does not load here',
    );
    expect(out.log_tail).toContain(
      'emend: karma runs in the sandbox\'s Chromium (the configuration named ["PhantomJS"])',
    );
  });

  it('says the browser is missing, naming what asks for it and how to install it, where the server has no Chromium', async () => {
    const without = await fixtureSandbox({ EMEND_CHROMIUM_PATH: '/nonexistent/chromium' });
    expect(without.report().browser).toBeUndefined();
    const repo = fixtureRepo(karmaProject());
    const out = await validate(without, { dir: repo.dir, base: repo.base });
    expect(out).toMatchObject({
      passed: null,
      runner: 'node',
      message:
        'this repository needs chromium (its tests run in a browser: karma-chrome-launcher), which the sandbox ' +
        'does not have: install it on the server (apt-get install chromium, or set EMEND_CHROMIUM_PATH to a ' +
        'Chromium); the change could not be validated',
    });
    expect(out.setup).toBeNull();
  });
});
