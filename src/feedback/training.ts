import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { taskFeedback, tasks } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { type FixOutputs, parseSiteOutputs, readProgress } from '../step-contract/index.js';
import type { Task } from '../tasks/service.js';
import { diffOf, outputsOf } from './memory-from-feedback.js';

export interface TrainingSummary {
  done_tasks: number;
  with_feedback: number;
  /** Done tasks by their current rating; `unrated` counts those with no rating (or no feedback). */
  by_rating: Record<'0' | '1' | '2' | '3' | '4' | '5' | 'unrated', number>;
  tokens_total: number;
}

/** The newest feedback row of a task holds its merged (current) feedback. */
const latestFeedback = sql`(select f.rating, f.correct, f.reuse, f.note, f.created_at from ${taskFeedback} f
  where f.task_id = ${tasks.id} and f.workspace_id = ${tasks.workspaceId} order by f.created_at desc, f.id desc limit 1)`;

/** Counts of what the export would hold: the account's done tasks only. */
export async function trainingSummary(deps: Pick<Deps, 'db'>, workspaceId: string): Promise<TrainingSummary> {
  const rows = await deps.db
    .select({
      rating: sql<number | null>`fb.rating`,
      tasks: sql<number>`count(*)::int`,
      withFeedback: sql<number>`count(fb.created_at)::int`,
      tokens: sql<string>`coalesce(sum(${tasks.tokensTotal}), 0)::bigint`,
    })
    .from(tasks)
    .leftJoin(sql`lateral ${latestFeedback} fb`, sql`true`)
    .where(and(eq(tasks.workspaceId, workspaceId), eq(tasks.status, 'done')))
    .groupBy(sql`fb.rating`);
  const out: TrainingSummary = {
    done_tasks: 0,
    with_feedback: 0,
    by_rating: { '0': 0, '1': 0, '2': 0, '3': 0, '4': 0, '5': 0, unrated: 0 },
    tokens_total: 0,
  };
  for (const r of rows) {
    const key = r.rating === null ? 'unrated' : (String(r.rating) as keyof TrainingSummary['by_rating']);
    out.by_rating[key] += Number(r.tasks);
    out.done_tasks += Number(r.tasks);
    out.with_feedback += Number(r.withFeedback);
    out.tokens_total += Number(r.tokens);
  }
  return out;
}

/** Tasks read per query of the export: bounds its memory whatever the account's size. */
export const EXPORT_PAGE = 500;

/** The planner's plan without what only the service uses (model id, memory item ids). */
function planOf(planner: FixOutputs['planner'] | undefined) {
  if (!planner) return null;
  const { model: _model, memory_used: _memory, ...plan } = planner;
  return plan;
}

function locatedFiles(locator: FixOutputs['locator'] | undefined): string[] {
  if (!locator) return [];
  if (locator.selected.length) return locator.selected;
  return locator.files.map((f) => f.path);
}

function validatorOf(validator: FixOutputs['validator'] | undefined) {
  if (!validator) return null;
  const { passed, command, new_failures, fixed } = validator;
  return { passed, command, new_failures, fixed };
}

const withoutModel = <T extends { model: string }>({ model: _model, ...rest }: T) => rest;

/**
 * What a task's steps made, for the export. A scaffold task's plan is the site's plan (its
 * outputs parsed as a site's); it has no located files, no diff, and no test command.
 */
function stepsOf(task: Pick<Task, 'taskType' | 'progress'>) {
  if (task.taskType === 'scaffold') {
    const { planner, validator } = parseSiteOutputs(readProgress(task.progress).outputs);
    return {
      plan: planner ? withoutModel(planner) : null,
      located_files: [],
      diff: null,
      validator: validator ? { passed: validator.passed, command: null, new_failures: [], fixed: [] } : null,
    };
  }
  const outputs = outputsOf(task);
  return {
    plan: planOf(outputs.planner),
    located_files: locatedFiles(outputs.locator),
    diff: diffOf(outputs),
    validator: validatorOf(outputs.validator),
  };
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/**
 * One JSON line per done task of the account, oldest first. Tasks are read a page at a time
 * by keyset on (created_at, id), with the page's current feedback in one more query, and a
 * page is produced only when the consumer asks for it: memory stays bounded by one page.
 * The cursor is the database's own text of created_at, so microseconds are never lost.
 * Every line is built from named fields (no spread of a row), so nothing else can leak out.
 */
export async function* trainingLines(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  pageSize = EXPORT_PAGE,
): AsyncGenerator<string> {
  let cursor: { at: string; id: string } | undefined;
  for (;;) {
    const page = await deps.db
      .select({
        id: tasks.id,
        createdAt: tasks.createdAt,
        at: sql<string>`${tasks.createdAt}::text`,
        taskType: tasks.taskType,
        repoUrl: tasks.repoUrl,
        prompt: tasks.prompt,
        progress: tasks.progress,
        prUrl: tasks.prUrl,
        prMerged: tasks.prMerged,
        prMergedAt: tasks.prMergedAt,
        humanEditAfter: tasks.humanEditAfter,
      })
      .from(tasks)
      .where(
        and(
          eq(tasks.workspaceId, workspaceId),
          eq(tasks.status, 'done'),
          cursor ? sql`(${tasks.createdAt}, ${tasks.id}) > (${cursor.at}::timestamptz, ${cursor.id}::uuid)` : undefined,
        ),
      )
      .orderBy(asc(tasks.createdAt), asc(tasks.id))
      .limit(pageSize);
    if (page.length === 0) return;
    const feedback = new Map<string, Record<string, unknown>>();
    const rows = await deps.db
      .selectDistinctOn([taskFeedback.taskId], {
        taskId: taskFeedback.taskId,
        rating: taskFeedback.rating,
        correct: taskFeedback.correct,
        reuse: taskFeedback.reuse,
        note: taskFeedback.note,
        createdAt: taskFeedback.createdAt,
      })
      .from(taskFeedback)
      .where(
        and(
          eq(taskFeedback.workspaceId, workspaceId),
          inArray(
            taskFeedback.taskId,
            page.map((t) => t.id),
          ),
        ),
      )
      .orderBy(taskFeedback.taskId, desc(taskFeedback.createdAt), desc(taskFeedback.id));
    for (const f of rows) {
      feedback.set(f.taskId, {
        rating: f.rating,
        correct: f.correct,
        reuse: f.reuse,
        note: f.note,
        updated_at: iso(f.createdAt),
      });
    }
    let chunk = '';
    for (const t of page) {
      chunk += `${JSON.stringify({
        id: t.id,
        created_at: iso(t.createdAt),
        task_type: t.taskType,
        repo: t.repoUrl,
        prompt: t.prompt,
        ...stepsOf(t),
        pr_url: t.prUrl,
        pr_merged: t.prMerged,
        pr_merged_at: iso(t.prMergedAt),
        human_edit_after: t.humanEditAfter,
        feedback: feedback.get(t.id) ?? null,
      })}\n`;
    }
    yield chunk;
    if (page.length < pageSize) return;
    const last = page[page.length - 1]!;
    cursor = { at: last.at, id: last.id };
  }
}
