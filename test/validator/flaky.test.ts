import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/types.js';
import { ValidatorOutput } from '../../src/step-contract/fix.js';
import { validate } from '../../src/validator/validate.js';
import { fixtureRepo, fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';

/*
 * Flaky tests and tests that need the network (docs/validator.md, "Flaky tests"), end to end in the
 * real bubblewrap sandbox on node --test fixtures. A test's "flakiness" is a counter file in the
 * tree it runs in (the copies persist between runs of one validation): it fails the first time it
 * runs on the change's tree and passes after, as a test racing a timer would.
 */

const pkg = JSON.stringify({ name: 'fixture', version: '1.0.0', private: true, scripts: { test: 'node --test' } });
const MATH = 'exports.add = (a, b) => a + b;\nexports.mul = (a, b) => a * b;\nexports.version = 1;\n';

const FLAKY_TEST = `const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { version } = require('../src/math.js');

test('sometimes times out', () => {
  // The tree's own counter: this tree's runs share it, the other tree has its own.
  const counter = path.join(__dirname, '..', '.runs');
  const runs = fs.existsSync(counter) ? Number(fs.readFileSync(counter, 'utf8')) + 1 : 1;
  fs.writeFileSync(counter, String(runs));
  assert.ok(!(version === 2 && runs === 1), 'timed out waiting for the server (run ' + runs + ')');
});
`;

const MATH_TESTS = `const test = require('node:test');
const assert = require('node:assert');
const { add, mul } = require('../src/math.js');
test('adds', () => assert.strictEqual(add(2, 3), 5));
test('multiplies', () => assert.strictEqual(mul(2, 3), 6));
`;

const NETWORK_TESTS = `const test = require('node:test');
const dns = require('node:dns/promises');
const { version } = require('../src/math.js');
// RFC 6761: .invalid never resolves; the test phase has no resolver to ask anyway.
test('downloads the schema', async () => {
  if (version === 2) await dns.lookup('nothing.invalid');
});
`;

async function validated(sandbox: Sandbox, base: Record<string, string>, change: Record<string, string>) {
  const repo = fixtureRepo(base, change);
  const out = await validate(sandbox, { dir: repo.dir, base: repo.base });
  // The new fields are the step contract's: the output comes back whole from its parse.
  expect(ValidatorOutput.parse(JSON.parse(JSON.stringify(out)))).toEqual(out);
  return out;
}

describe('flaky tests and tests that need the network', { timeout: 60_000 }, () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'off' });
  });
  afterAll(() => removeFixtureRepos());

  it('runs a test that failed only on the change again, and a flaky one does not fail the change', async () => {
    const out = await validated(
      sandbox,
      { 'package.json': pkg, 'src/math.js': MATH, 'test/flaky.test.js': FLAKY_TEST, 'test/math.test.js': MATH_TESTS },
      { 'src/math.js': MATH.replace('version = 1', 'version = 2') },
    );
    expect(out).toMatchObject({
      passed: true,
      new_failures: [],
      flaky: ['sometimes times out'],
      reruns: [{ test: 'sometimes times out', change: ['failed', 'passed'], baseline: ['passed', 'passed'] }],
    });
    expect(out.message).toContain(
      '1 test(s) changed their result when run again on the same tree, so they are flaky and not counted as new: ' +
        'sometimes times out (change: failed, passed; base: passed, passed)',
    );
  });

  it('keeps a test the change really breaks a new failure after running it again, beside a flaky one', async () => {
    const out = await validated(
      sandbox,
      { 'package.json': pkg, 'src/math.js': MATH, 'test/flaky.test.js': FLAKY_TEST, 'test/math.test.js': MATH_TESTS },
      { 'src/math.js': MATH.replace('version = 1', 'version = 2').replace('a * b', 'a + b') },
    );
    expect(out).toMatchObject({
      passed: false,
      new_failures: ['multiplies'],
      flaky: ['sometimes times out'],
      reruns: [
        { test: 'multiplies', change: ['failed', 'failed'], baseline: ['passed', 'passed'] },
        { test: 'sometimes times out', change: ['failed', 'passed'], baseline: ['passed', 'passed'] },
      ],
    });
    expect(out.failure_details?.map((d) => d.test)).toEqual(['multiplies']);
  });

  it('names a test that reaches for the network, and it still fails the change', async () => {
    const out = await validated(
      sandbox,
      { 'package.json': pkg, 'src/math.js': MATH, 'test/net.test.js': NETWORK_TESTS, 'test/math.test.js': MATH_TESTS },
      { 'src/math.js': MATH.replace('version = 1', 'version = 2') },
    );
    expect(out).toMatchObject({
      passed: false,
      new_failures: ['downloads the schema'],
      needs_network: ['downloads the schema'],
      flaky: [],
    });
    expect(out.failure_details?.[0]?.message).toMatch(/getaddrinfo (ENOTFOUND|EAI_AGAIN) nothing\.invalid/);
    expect(out.message).toContain(
      '1 failing test(s) need the network, which the test phase does not have: downloads the schema',
    );
  });
});
