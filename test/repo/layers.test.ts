import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');
const CONFIG = resolve(ROOT, '.dependency-cruiser.cjs');
const DEPCRUISE = resolve(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
}

/** The layer check's violations in `cwd`'s src/ and web/, each as "from → to (rule)". */
function violations(cwd: string): string[] {
  const args = [DEPCRUISE, '--config', CONFIG, '--output-type', 'json'];
  // The folder-cycle rule makes depcruise describe every folder too: more than spawnSync's 1 MiB.
  const run = spawnSync(process.execPath, [...args, 'src', 'web'], { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (run.error) throw run.error;
  if (!run.stdout.trim()) throw new Error(`depcruise printed nothing (exit ${run.status}): ${run.stderr}`);
  const result = JSON.parse(run.stdout) as { summary: { violations: Violation[] } };
  return result.summary.violations
    .filter((v) => v.rule.severity !== 'ignore')
    .map((v) => `${v.from} → ${v.to} (${v.rule.name})`)
    .sort();
}

// Issue 14, point 6: imports point down the layer table of .dependency-cruiser.cjs, never up,
// with no cycles (of files, and since issue 43 of folders), and the panel shares no code with the service.
// Each test cruises a whole tree with the TypeScript parser: about 2 s alone, many times that on
// a machine busy with other test files, hence the explicit timeout.
describe('the layers of src/', { timeout: 120_000 }, () => {
  it('no import breaks the layer table', () => {
    expect(violations(ROOT)).toEqual([]);
  });

  it('the check catches an upward import, a cycle of files and one of folders, a value import of deps.ts, a stray folder, web → src and a step writing the task’s log', () => {
    expect(violations(resolve(import.meta.dirname, 'fixtures/layers'))).toEqual([
      // accounts/person → workspaces/personal and workspaces/members → accounts/names: no file
      // imports itself back, yet the two folders import each other (issue 43).
      'src/accounts → src/workspaces (no-folder-cycle)',
      'src/config/config.ts → src/engine/runner.ts (base-imports-only-below)',
      'src/deps.ts → src/ids.ts (deps-imports-types-only)',
      'src/steps/fix/stream.ts → src/tasks/task-logs.ts (steps-report-through-the-store)',
      'src/steps/plan.ts → src/deps.ts (deps-imported-as-type-only)',
      'src/stray/helper.ts → src/ids.ts (src-file-in-a-layer)',
      'src/tasks/a.ts → src/tasks/b.ts (no-circular)',
      'src/workspaces → src/accounts (no-folder-cycle)',
      'web/main.ts → src/ids.ts (web-imports-nothing-from-src)',
    ]);
  });
});
