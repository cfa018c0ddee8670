import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeToolchains } from '../../src/environments/toolchains.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { fixtureSandbox, removeFixtureRepos } from '../support/fixture-repos.js';

/*
 * The toolchain probe in the real bubblewrap sandbox: npm's version read from the package.json
 * beside its CLI where `npm` leads there, and from `npm -v` where it does not (a wrapper script).
 */
describe("the toolchain probe's npm", () => {
  let sandbox: Sandbox;
  let tools: string;
  beforeAll(async () => {
    sandbox = await fixtureSandbox();
    tools = mkdtempSync(join(tmpdir(), 'emend-probe-tools-'));
  });
  afterAll(() => {
    removeFixtureRepos();
    rmSync(tools, { recursive: true, force: true });
  });

  it('is the version npm itself gives, read without starting it', async () => {
    const own = execFileSync('npm', ['-v'], { encoding: 'utf8' }).trim();
    expect(await probeToolchains(sandbox, ['node', 'npm'])).toEqual({ node: process.versions.node, npm: own });
  });

  it('asks `npm -v` where npm is a wrapper of its own', async () => {
    // A wrapper beside a package.json of another version: not npm's CLI, so its own answer counts.
    const bin = join(tools, 'wrapper', 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(join(tools, 'wrapper', 'package.json'), '{\n  "name": "npm",\n  "version": "1.0.0"\n}\n');
    writeFileSync(join(bin, 'npm'), '#!/bin/sh\necho 9.8.7\n');
    chmodSync(join(bin, 'npm'), 0o755);
    const facts = await probeToolchains(sandbox, ['npm'], {
      toolRoots: [join(tools, 'wrapper')],
      pathPrefix: [bin],
    });
    expect(facts).toEqual({ npm: '9.8.7' });
  });
});
