import { and, eq } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { repoMemory } from '../../src/db/schema.js';
import { rememberedTestCommand } from '../../src/memory/repo-memory.js';
import { CALC_REPO, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';
import { insertTasks, taskRow } from './seed.js';

const LESSON = 'Keep the docstring of add() exactly as it is; our reviewers rejected a reworded one.';

describe('feedback becomes repo memory, end to end', { timeout: 300_000 }, () => {
  let svc: ModelService;
  afterEach(async () => {
    await svc?.close();
  });

  it(
    'a "no" with a note is a lesson in the planner’s prompt of the next task on the repository, not on another ' +
      'repository or account; the detected test command is remembered',
    async () => {
      svc = await startModelService();
      const { h, model } = svc;
      h.github.createRepo('acme', 'calc', { files: CALC_REPO });
      h.github.createRepo('acme', 'calc-fork', { files: CALC_REPO });
      const calcUrl = `${h.github.webUrl}/acme/calc`;
      const otherUrl = `${h.github.webUrl}/acme/calc-fork`;
      scriptCalcRun(model);
      const owner = await newAccount(h, { plan: 'free' });
      const stranger = await newAccount(h, { plan: 'free' });
      const calls = () => model.calls.splice(0);

      const first = await runFixTask(h, owner.auth, calcUrl, 'done');
      calls();
      const validator = first.byStep('validator')[0]!.output;
      expect(validator).toMatchObject({ passed: true, source: 'detected' });
      // the validator's working command, found by detection, is remembered for the account and repository
      expect(await rememberedTestCommand(h.deps, owner.account.id, calcUrl)).toBe(validator.command);
      expect(await rememberedTestCommand(h.deps, stranger.account.id, calcUrl)).toBeUndefined();

      const fb = await h.app.inject({
        method: 'POST',
        url: `/v1/tasks/${first.task.id}/feedback`,
        headers: owner.auth,
        payload: { correct: 'no', note: LESSON, rating: 1 },
      });
      expect(fb.statusCode, fb.body).toBe(200);
      const memory = (
        await h.app.inject({
          method: 'GET',
          url: `/v1/me/memory?repo=${encodeURIComponent(calcUrl)}`,
          headers: owner.auth,
        })
      ).json();
      const lesson = memory.items.find((i: { kind: string }) => i.kind === 'lesson');
      expect(lesson).toMatchObject({
        task_id: first.task.id,
        content: { note: LESSON, correct: 'no', files: ['calc/ops.py'] },
      });
      expect(lesson.content.prompt).toBe(first.task.prompt);
      expect(lesson.text).toContain(LESSON);
      expect(memory.items.map((i: { kind: string }) => i.kind).sort()).toEqual(['lesson', 'test_command']);

      const next = await runFixTask(h, owner.auth, calcUrl, 'done');
      const seen = calls();
      expect(seen.find((c) => stepOf(c) === 'planner')!.text).toContain(LESSON);
      expect(seen.find((c) => stepOf(c) === 'fixer')!.text).toContain(LESSON);
      expect(next.byStep('planner')[0]!.output.memory_used).toEqual([lesson.id]);
      expect(next.byStep('fixer')[0]!.output.memory_used).toEqual([lesson.id]);
      // the remembered command is detection's own as it ran: the next run is detection's recipe again
      expect(memory.items.find((i: { kind: string }) => i.kind === 'test_command').content.command).toMatch(
        /^python3 -m pytest /,
      );
      expect(next.byStep('validator')[0]!.output).toMatchObject({ passed: true, source: 'detected' });
      // it found the same command again: the item is kept, not written anew
      const after = (
        await h.app.inject({
          method: 'GET',
          url: `/v1/me/memory?repo=${encodeURIComponent(calcUrl)}`,
          headers: owner.auth,
        })
      ).json();
      const kept = (items: { kind: string; id: string; task_id: string }[]) =>
        items.find((i) => i.kind === 'test_command');
      expect(kept(after.items)).toEqual(kept(memory.items));
      // a second task on the same commit reuses the locator's index instead of rebuilding it
      expect(next.byStep('locator')[0]!.output.index).toMatchObject({ cache: 'hit' });

      const elsewhere = await runFixTask(h, owner.auth, otherUrl, 'done');
      expect(calls().some((c) => c.text.includes(LESSON))).toBe(false);
      expect(elsewhere.byStep('planner')[0]!.output.memory_used).toEqual([]);

      const theirs = await runFixTask(h, stranger.auth, calcUrl, 'done');
      expect(calls().some((c) => c.text.includes(LESSON))).toBe(false);
      expect(theirs.byStep('planner')[0]!.output.memory_used).toEqual([]);
      expect(theirs.byStep('validator')[0]!.output.source).toBe('detected');
    },
  );
});

describe('memory rules and /v1/me/memory', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const REPO = 'https://github.com/acme/widgets';
  const items = async (auth: Record<string, string>, repo = REPO) => {
    const res = await h.app.inject({
      method: 'GET',
      url: `/v1/me/memory?repo=${encodeURIComponent(repo)}`,
      headers: auth,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as {
      repo: string;
      items: { id: string; kind: string; text: string; content: Record<string, unknown>; task_id: string | null }[];
    };
  };
  const feedback = (auth: Record<string, string>, id: string, payload: object) =>
    h.app.inject({ method: 'POST', url: `/v1/tasks/${id}/feedback`, headers: auth, payload });

  it(
    'reuse yes keeps the plan and diff as an example; posting again replaces the task’s items instead of adding ' +
      'more',
    async () => {
      const { auth, account } = await newAccount(h, { scm: false });
      const row = taskRow(account.id, 7);
      await insertTasks(h.deps.db, [row]);
      await feedback(auth, row.id!, { reuse: 'yes', rating: 5 });
      let mem = await items(auth);
      expect(mem.items).toHaveLength(1);
      const example = mem.items[0]!;
      expect(example.kind).toBe('example');
      expect(example.task_id).toBe(row.id);
      const outputs = (row.progress as { outputs: Record<string, Record<string, unknown>> }).outputs;
      expect(example.content).toEqual({
        prompt: row.prompt,
        plan: { summary: outputs.planner!.summary, steps: outputs.planner!.steps },
        diff: outputs.fixer!.diff,
      });
      expect(example.text).toContain('Worked example');

      // the same again, then a partial with a note: one example, one lesson
      await feedback(auth, row.id!, { reuse: 'yes' });
      await feedback(auth, row.id!, { correct: 'partial', note: 'Also update the changelog.' });
      mem = await items(auth);
      expect(mem.items.map((i) => i.kind).sort()).toEqual(['example', 'lesson']);
      expect(mem.items.find((i) => i.kind === 'lesson')!.content).toEqual({
        note: 'Also update the changelog.',
        prompt: row.prompt,
        files: ['src/module7/handler7.ts'],
        correct: 'partial',
      });
      // changing one's mind removes what no longer applies
      await feedback(auth, row.id!, { reuse: 'no', correct: 'yes' });
      expect((await items(auth)).items).toEqual([]);
      await feedback(auth, row.id!, { correct: 'no' });
      expect((await items(auth)).items.map((i) => i.kind)).toEqual(['lesson']);
    },
  );

  it(
    'makes nothing from a correct result, a note without a verdict, a task without a diff, a failed task’s ' +
      'reuse, or a scaffold task',
    async () => {
      const { auth, account } = await newAccount(h, { scm: false });
      const noDiff = taskRow(account.id, 1);
      (noDiff.progress as { outputs: Record<string, unknown> }).outputs.fixer = undefined;
      const rows = [
        taskRow(account.id, 2),
        taskRow(account.id, 3),
        noDiff,
        taskRow(account.id, 4, { status: 'failed' }),
        taskRow(account.id, 5, { taskType: 'scaffold', repoUrl: null, repoOwner: null, repoName: null }),
      ];
      await insertTasks(h.deps.db, rows);
      await feedback(auth, rows[0]!.id!, { correct: 'yes', note: 'Good.' });
      await feedback(auth, rows[1]!.id!, { note: 'Fine, I guess.', rating: 3 });
      await feedback(auth, rows[2]!.id!, { reuse: 'yes' });
      await feedback(auth, rows[3]!.id!, { reuse: 'yes' });
      await feedback(auth, rows[4]!.id!, { reuse: 'yes', correct: 'no', note: 'Wrong colours.' });
      const all = await h.deps.db.select().from(repoMemory).where(eq(repoMemory.workspaceId, account.id));
      expect(all).toEqual([]);
      // a failed task's note still teaches: it is a lesson
      await feedback(auth, rows[3]!.id!, { correct: 'no', note: 'It failed because the fixture was stale.' });
      const lessons = (await items(auth)).items;
      expect(lessons.map((i) => [i.kind, i.task_id])).toEqual([['lesson', rows[3]!.id]]);
    },
  );

  it('GET normalises the repository URL the way tasks do, and refuses a URL that is not a repository', async () => {
    const { auth, account } = await newAccount(h, { scm: false });
    const row = taskRow(account.id, 9);
    await insertTasks(h.deps.db, [row]);
    await feedback(auth, row.id!, { correct: 'no', note: 'Use the helper in utils.' });
    for (const spelling of [
      'https://github.com/ACME/Widgets',
      'https://github.com/acme/widgets.git',
      'https://github.com/acme/widgets/',
    ]) {
      const mem = await items(auth, spelling);
      expect(mem.items, spelling).toHaveLength(1);
    }
    expect((await items(auth, 'https://github.com/acme/widgets')).repo).toBe('https://github.com/acme/widgets');
    for (const bad of ['https://gitlab.com/acme/widgets', 'not a url', 'https://github.com/acme']) {
      const res = await h.app.inject({
        method: 'GET',
        url: `/v1/me/memory?repo=${encodeURIComponent(bad)}`,
        headers: auth,
      });
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error).toBe('not_a_scm_url');
    }
    const missing = await h.app.inject({ method: 'GET', url: '/v1/me/memory', headers: auth });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toMatchObject({ error: 'bad_request' });
    expect(missing.json().message).toContain('repo');
  });

  it('never shows or deletes another account’s items; DELETE removes one of yours', async () => {
    const owner = await newAccount(h, { scm: false });
    const other = await newAccount(h, { scm: false });
    const row = taskRow(owner.account.id, 11);
    await insertTasks(h.deps.db, [row]);
    await feedback(owner.auth, row.id!, { correct: 'no', note: 'Private lesson.' });
    const [item] = (await items(owner.auth)).items;
    expect((await items(other.auth)).items).toEqual([]);
    const theirs = await h.app.inject({ method: 'DELETE', url: `/v1/me/memory/${item!.id}`, headers: other.auth });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error).toBe('not_found');
    expect(await h.deps.db.select().from(repoMemory).where(eq(repoMemory.id, item!.id))).toHaveLength(1);
    const mine = await h.app.inject({ method: 'DELETE', url: `/v1/me/memory/${item!.id}`, headers: owner.auth });
    expect(mine.statusCode).toBe(200);
    expect(mine.json()).toEqual({ deleted: true });
    expect((await items(owner.auth)).items).toEqual([]);
    expect(
      (await h.app.inject({ method: 'DELETE', url: `/v1/me/memory/${item!.id}`, headers: owner.auth })).statusCode,
    ).toBe(404);
    const left = await h.deps.db
      .select()
      .from(repoMemory)
      .where(and(eq(repoMemory.workspaceId, owner.account.id)));
    expect(left).toEqual([]);
  });
});
