import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const repoRoot = resolve(import.meta.dirname, '../..');
const VITEST = resolve(repoRoot, 'node_modules/vitest/vitest.mjs');

/** vitest run on the fixture files under test/repo/fixtures/summary, as a separate process. */
function runFixtures(
  filters: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; output: string }> {
  return new Promise((done, fail) => {
    // Only what vitest needs: a CI variable of the outer run must not leak in.
    const child = spawn(
      process.execPath,
      [VITEST, 'run', '--config', 'test/repo/fixtures/summary/vitest.config.ts', ...filters],
      {
        cwd: repoRoot,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, NO_COLOR: '1', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let output = '';
    child.stdout.on('data', (b: Buffer) => {
      stdout += b.toString();
      output += b.toString();
    });
    child.stderr.on('data', (b: Buffer) => (output += b.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, output }));
  });
}

/** The summary: from "tests run per leg:" to the closing line. */
function summary(stdout: string): string[] {
  const lines = stdout.split('\n');
  const start = lines.indexOf('tests run per leg:');
  return lines.slice(start).filter((l) => l !== '');
}

describe('the closing summary of a test run', { timeout: 60_000, concurrent: true }, () => {
  it(
    'counts per leg, names the legs that did not run, counts tests under a failed beforeAll or in a file that ' +
      'did not load as failed',
    async () => {
      const run = await runFixtures([], {});
      expect(run.code).toBe(1);
      expect(summary(run.stdout)).toEqual([
        'tests run per leg:',
        // first: passing 2 + before-all 1 passed; before-all 2 + failing 1 + import-fails 1 failed; skips 2
        '  first:  3 passed, 4 failed, 2 skipped',
        '  second: 3 passed, 2 failed, 0 skipped',
        '  absent: not run',
        'skipped (2):',
        '  [first] skips.fixture.ts > skipped by flag',
        '  [first] skips.fixture.ts > needs what is not there (the widget is missing: not installed (apt-get ' +
          'install -y widget))',
        '6 passed, 6 failed, 2 skipped',
      ]);
    },
  );

  it(
    'outside CI a missing requirement is a skip with its note and the run passes; under CI it fails the test, ' +
      'and any skip fails the run',
    async () => {
      const [local, ci] = await Promise.all([
        runFixtures(['passing', 'skips'], {}),
        runFixtures(['passing', 'skips'], { CI: 'true' }),
      ]);
      expect(local.code).toBe(0);
      expect(summary(local.stdout).at(-1)).toBe('4 passed, 0 failed, 2 skipped');
      expect(ci.code).toBe(1);
      expect(ci.output).toContain(
        'MissingRequirementError: CI: the widget is missing: not installed (apt-get install -y widget)',
      );
      expect(ci.stdout).toContain('CI: 1 skipped tests fail the run');
      expect(summary(ci.stdout).at(-1)).toBe('4 passed, 1 failed, 1 skipped');
    },
  );

  it('passes a clean run under CI', async () => {
    const run = await runFixtures(['passing'], { CI: 'true' });
    expect(run.code).toBe(0);
    expect(summary(run.stdout)).toEqual([
      'tests run per leg:',
      '  first:  2 passed, 0 failed, 0 skipped',
      '  second: 2 passed, 0 failed, 0 skipped',
      '  absent: not run',
      '4 passed, 0 failed, 0 skipped',
    ]);
  });
});
