import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;

it('the committed migrations match the Drizzle schema (run `npm run db:generate` after changing it)', () => {
  // drizzle-kit takes --out relative to the working directory, so the scratch copy lives in the tree (ignored by git).
  const out = mkdtempSync(join(root, '.vitest-migrations-'));
  try {
    cpSync(join(root, 'migrations'), out, { recursive: true });
    const before = readdirSync(out).filter((f) => f.endsWith('.sql'));
    const log = execFileSync(
      join(root, 'node_modules/.bin/drizzle-kit'),
      ['generate', '--dialect', 'postgresql', '--schema', 'src/db/schema.ts', '--out', out.slice(root.length)],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const after = readdirSync(out).filter((f) => f.endsWith('.sql'));
    // drizzle-kit can exit 0 after an error, so its words are checked too.
    expect(log).toMatch(/No schema changes/);
    expect(after, log).toEqual(before);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
