import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskFeedback } from '../../src/db/schema.js';
import { EXPORT_PAGE } from '../../src/feedback/training.js';
import { newId } from '../../src/ids.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type TaskRow, insertTasks, taskRow } from './seed.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

type Line = Record<string, unknown>;
const exportOf = async (auth: Record<string, string>) => {
  const res = await h.app.inject({ method: 'GET', url: '/v1/me/training/export.jsonl', headers: auth });
  expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
  return {
    res,
    lines: res.body
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line),
  };
};
const summaryOf = async (auth: Record<string, string>) => {
  const res = await h.app.inject({ method: 'GET', url: '/v1/me/training/summary', headers: auth });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('training summary and export', { timeout: 120_000 }, () => {
  it(
    'exports every done task of the caller once, in order, across pages, with the fields of the format; the ' +
      'summary counts them',
    async () => {
      const PROVIDER_KEY = `sk-proj-${'Q'.repeat(40)}`;
      const mine = await newAccount(h, { plan: 'pro' });
      const theirs = await newAccount(h, { plan: 'pro' });
      // secrets the caller and the other account hold: none may appear in an export
      for (const who of [mine, theirs]) {
        const key = await h.app.inject({
          method: 'POST',
          url: '/v1/me/keys',
          headers: who.auth,
          payload: { provider: 'openai', api_key: PROVIDER_KEY },
        });
        expect(key.statusCode, key.body).toBe(201);
      }
      const secrets = [mine.token, theirs.token, PROVIDER_KEY, mine.scm!.token, theirs.scm!.token];

      // More than two pages; groups of tasks share one created_at, so the keyset's id tie-break is exercised.
      const n = EXPORT_PAGE * 2 + 37;
      const stamp = (i: number) => new Date(Date.UTC(2026, 0, 1) + Math.floor(i / 7) * 1000);
      const rows: TaskRow[] = Array.from({ length: n }, (_, i) =>
        taskRow(mine.account.id, i, { createdAt: stamp(i), tokensTotal: 10 + (i % 3) }),
      );
      const notDone = (['pending', 'running', 'failed', 'cancelled'] as const).map((status, i) =>
        taskRow(mine.account.id, 5000 + i, { status, prompt: `not done ${status}` }),
      );
      const scaffold = taskRow(mine.account.id, 6000, {
        taskType: 'scaffold',
        repoUrl: null,
        repoOwner: null,
        repoName: null,
        progress: {},
        prUrl: null,
        tokensTotal: 7,
      });
      const stranger = Array.from({ length: 30 }, (_, i) =>
        taskRow(theirs.account.id, i, { prompt: `STRANGER task ${i}` }),
      );
      await insertTasks(h.deps.db, [...rows, ...notDone, scaffold, ...stranger]);
      // Microseconds a JavaScript Date cannot hold: a cursor that lost them would repeat rows at every page boundary.
      await h.deps.db.execute(
        sql`update tasks set created_at = created_at + interval '123 microseconds' where workspace_id = ${mine.account.id}`,
      );

      // feedback: ratings on some, a later post replacing an earlier one, and the stranger's feedback on their own
      const rate = async (auth: Record<string, string>, id: string, payload: object) => {
        const res = await h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/feedback`, headers: auth, payload });
        expect(res.statusCode, res.body).toBe(200);
      };
      await rate(mine.auth, rows[0]!.id!, { rating: 5, correct: 'yes' });
      await rate(mine.auth, rows[1]!.id!, { rating: 1 });
      h.clock.advance(1000);
      await rate(mine.auth, rows[1]!.id!, { rating: 2, note: 'second thoughts' });
      await rate(mine.auth, rows[600]!.id!, { note: 'no rating here' });
      await rate(mine.auth, notDone[2]!.id!, { rating: 0 }); // failed: not exported, not counted
      await rate(theirs.auth, stranger[0]!.id!, { rating: 4 });

      const summary = await summaryOf(mine.auth);
      const tokens = rows.reduce((s, r) => s + r.tokensTotal!, 0) + 7;
      expect(summary).toEqual({
        done_tasks: n + 1,
        with_feedback: 3,
        by_rating: { '0': 0, '1': 0, '2': 1, '3': 0, '4': 0, '5': 1, unrated: n + 1 - 2 },
        tokens_total: tokens,
      });
      expect(await summaryOf(theirs.auth)).toMatchObject({
        done_tasks: 30,
        with_feedback: 1,
        by_rating: { '4': 1, unrated: 29 },
      });

      const { res, lines } = await exportOf(mine.auth);
      expect(res.headers['content-type']).toContain('application/x-ndjson');
      expect(res.headers['content-disposition']).toMatch(
        /^attachment; filename="emend-training-\d{4}-\d\d-\d\d\.jsonl"$/,
      );
      expect(res.body.endsWith('\n')).toBe(true);
      expect(lines).toHaveLength(n + 1);
      const expectedOrder = [...rows, scaffold]
        .map((r) => ({ id: r.id!, at: r.createdAt!.getTime() }))
        .sort((a, b) => a.at - b.at || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);
      expect(lines.map((l) => l.id)).toEqual(expectedOrder);
      expect(new Set(lines.map((l) => l.id)).size).toBe(lines.length);

      const first = lines.find((l) => l.id === rows[1]!.id)!;
      const outputs = (rows[1]!.progress as { outputs: Record<string, Record<string, unknown>> }).outputs;
      expect(Object.keys(first).sort()).toEqual(
        [
          'id',
          'created_at',
          'task_type',
          'repo',
          'prompt',
          'plan',
          'located_files',
          'diff',
          'validator',
          'pr_url',
          'pr_merged',
          'pr_merged_at',
          'human_edit_after',
          'feedback',
        ].sort(),
      );
      expect(first).toMatchObject({
        created_at: rows[1]!.createdAt!.toISOString(),
        task_type: 'fix',
        repo: 'https://github.com/acme/widgets',
        prompt: rows[1]!.prompt,
        plan: {
          summary: outputs.planner!.summary,
          steps: outputs.planner!.steps,
          likely_files: outputs.planner!.likely_files,
          test_strategy: outputs.planner!.test_strategy,
          risks: outputs.planner!.risks,
        },
        located_files: ['src/module1/handler1.ts'],
        diff: outputs.fixer!.diff,
        validator: {
          passed: true,
          command: 'npx vitest run --reporter=verbose',
          new_failures: [],
          fixed: ['handler > keeps the last item'],
        },
        pr_url: rows[1]!.prUrl,
        pr_merged: false,
        pr_merged_at: null,
        human_edit_after: false,
        feedback: { rating: 2, correct: null, reuse: null, note: 'second thoughts' },
      });
      expect(first.plan).not.toHaveProperty('model');
      expect(first.plan).not.toHaveProperty('memory_used');
      expect(lines.find((l) => l.id === rows[600]!.id)!.feedback).toMatchObject({
        rating: null,
        note: 'no rating here',
      });
      expect(lines.find((l) => l.id === rows[2]!.id)!.feedback).toBeNull();
      expect(lines.find((l) => l.id === scaffold.id)).toMatchObject({
        task_type: 'scaffold',
        repo: null,
        plan: null,
        located_files: [],
        diff: null,
        validator: null,
      });

      // nothing of the other account, nothing secret, nothing not done
      expect(res.body).not.toContain('STRANGER');
      expect(res.body).not.toContain(theirs.account.id);
      expect(res.body).not.toContain('not done');
      for (const secret of secrets) expect(res.body).not.toContain(secret);
      expect(res.body).not.toMatch(/tk_[A-Za-z0-9]/);
      const other = await exportOf(theirs.auth);
      expect(other.lines).toHaveLength(30);
      expect(other.lines.every((l) => String(l.prompt).startsWith('STRANGER'))).toBe(true);
      for (const secret of secrets) expect(other.res.body).not.toContain(secret);
    },
  );

  it('an account with nothing done exports an empty file and zero counts', async () => {
    const { auth } = await newAccount(h, { scm: false });
    const { res, lines } = await exportOf(auth);
    expect(res.body).toBe('');
    expect(lines).toEqual([]);
    expect(await summaryOf(auth)).toEqual({
      done_tasks: 0,
      with_feedback: 0,
      by_rating: { '0': 0, '1': 0, '2': 0, '3': 0, '4': 0, '5': 0, unrated: 0 },
      tokens_total: 0,
    });
  });

  it('feedback rows of another account on a task are never read as the task’s feedback', async () => {
    // The API cannot write such a row; the queries must not trust that alone.
    const mine = await newAccount(h, { scm: false });
    const intruder = await newAccount(h, { scm: false });
    const row = taskRow(mine.account.id, 1);
    await insertTasks(h.deps.db, [row]);
    await h.deps.db.insert(taskFeedback).values({
      id: newId(),
      taskId: row.id!,
      workspaceId: intruder.account.id,
      rating: 0,
      note: 'INTRUDER',
      createdAt: h.clock.now(),
    });
    const { res, lines } = await exportOf(mine.auth);
    expect(lines[0]!.feedback).toBeNull();
    expect(res.body).not.toContain('INTRUDER');
    expect(await summaryOf(mine.auth)).toMatchObject({ with_feedback: 0, by_rating: { '0': 0, unrated: 1 } });
  });
});
