import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

// `npm run demo -- --eval` as a person runs it: the script in its own process, its printed summary read.
describe('npm run demo -- --eval', () => {
  it('runs emend eval in model mode on the built-in instances and prints the summary', {
    timeout: 180_000,
  }, async () => {
    const { stdout } = await promisify(execFile)(
      resolve(ROOT, 'node_modules/.bin/tsx'),
      ['scripts/demo.ts', '--eval'],
      {
        cwd: ROOT,
        env: { ...process.env, EMEND_SANDBOX: 'bubblewrap', LOG_LEVEL: 'warn' },
        encoding: 'utf8',
      },
    );
    expect(stdout).toContain('2 of 2 resolved');
    expect(stdout).toMatch(/\[2\/2, 2 resolved\] acme__jscalc-1: RESOLVED/);
    expect(stdout).toContain('# emend eval (model, plan pro)');
    expect(stdout).toContain('- validator agrees with the judge: 2 of 2 (100.0%)');
    expect(stdout).toMatch(/\| fixer \| 2 \| 0 \| [1-9]\d* \| [1-9]\d* \| \$0\.\d{4} \|/);
  });
});
