import type { Db } from '../../src/db/client.js';
import { tasks } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';

/**
 * Task rows written straight into the service's own tables (as the runner leaves them when a
 * task has finished), so tests and the export benchmark can have thousands of tasks at once.
 */
export type TaskRow = typeof tasks.$inferInsert;

/** Step outputs shaped as the production steps write them into tasks.progress, of a realistic size (a few KB). */
export function sampleProgress(i: number, opts: { diffLines?: number } = {}) {
  const file = `src/module${i % 37}/handler${i % 11}.ts`;
  const lines = opts.diffLines ?? 40;
  const body = Array.from(
    { length: lines },
    (_, n) => `-  const value${n} = compute(input, ${n});\n+  const value${n} = compute(input, ${n + 1});`,
  ).join('\n');
  return {
    next: 'end',
    baseCommit: 'a'.repeat(40),
    outputs: {
      planner: {
        summary: `Fix the off-by-one in ${file} (task ${i}).`,
        steps: ['Read the handler', `Change the bound in ${file}`, 'Add a test for the edge'],
        likely_files: [file],
        test_strategy: 'Run the unit tests of the module.',
        risks: ['Callers may rely on the old bound.'],
        memory_used: [],
        model: 'openai/gpt-4o-mini',
      },
      locator: {
        files: [
          { path: file, score: 0.91, reasons: ['symbol match'] },
          { path: `src/module${i % 37}/index.ts`, score: 0.4, reasons: ['imports'] },
        ],
        selected: [file],
        reranked: false,
        index: { cache: 'hit', files: 812, ms: 35 },
      },
      inspector: {
        summary: `The bound in ${file} is off by one.`,
        insights: [],
        files: [file],
        model: 'openai/gpt-4o-mini',
      },
      fixer: {
        diff: `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1,${lines} +1,${lines} @@\n${body}\n`,
        files_changed: [{ path: file, kind: 'modified' }],
        edits_applied: 1,
        edits_failed: [],
        rounds: 1,
        notes: 'Changed the bound.',
        memory_used: [],
        model: 'openai/gpt-4o-mini',
      },
      validator: {
        command: 'npx vitest run --reporter=verbose',
        setup: null,
        passed: true,
        new_failures: [],
        fixed: ['handler > keeps the last item'],
        preexisting_failures: [],
        duration_ms: 2100,
        log_tail: 'Test Files  12 passed (12)\n',
        source: 'detected',
        runner: 'node',
      },
      pr: {
        pr_url: `https://github.com/acme/widgets/pull/${i}`,
        number: i,
        branch: `emend/${i}`,
        head: `emend/${i}`,
        base: 'main',
        commit: 'b'.repeat(40),
        draft: false,
        drafts_disallowed: false,
        fork: null,
      },
    },
  };
}

/** A finished fix task of the account (status done unless given), with sample outputs. */
export function taskRow(accountId: string, i: number, over: Partial<TaskRow> = {}): TaskRow {
  return {
    id: newId(),
    workspaceId: accountId,
    taskType: 'fix',
    mode: 'pr',
    status: 'done',
    prompt: `Fix the off-by-one error in handler ${i}`,
    repoUrl: 'https://github.com/acme/widgets',
    repoOwner: 'acme',
    repoName: 'widgets',
    progress: sampleProgress(i),
    prUrl: `https://github.com/acme/widgets/pull/${i}`,
    tokensTotal: 1000 + i,
    createdAt: new Date(Date.UTC(2026, 0, 1) + i * 1000),
    finishedAt: new Date(Date.UTC(2026, 0, 1) + i * 1000 + 500),
    ...over,
  };
}

/** Inserts rows in batches (one statement per batch). */
export async function insertTasks(db: Db, rows: TaskRow[], batch = 500): Promise<void> {
  for (let i = 0; i < rows.length; i += batch) await db.insert(tasks).values(rows.slice(i, i + batch));
}
