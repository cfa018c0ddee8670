import { and, desc, eq, inArray } from 'drizzle-orm';
import { repoMemory } from '../db/schema.js';
import type { Db } from '../db/client.js';
import type { Deps } from '../deps.js';
import { newId } from '../ids.js';
import { estimateTokens } from '../llm/usage.js';
import { tokenize } from '../locator/tokenize.js';
import { clip } from '../text/clip.js';

export type MemoryKind = 'lesson' | 'example' | 'test_command';

/** A reviewer's correction: the note in their words, with what the task was about. */
export interface LessonContent {
  note: string;
  prompt: string;
  files: string[];
  correct?: string;
}
/** A task the reviewer said to reuse: its plan and diff as a worked example. */
export interface ExampleContent {
  prompt: string;
  plan: { summary?: string; steps?: string[] } | null;
  diff: string;
}
export interface TestCommandContent {
  command: string;
}

export interface MemoryItem {
  id: string;
  kind: MemoryKind;
  content: LessonContent | ExampleContent | TestCommandContent;
  taskId: string | null;
  createdAt: Date;
}

/** One key per repository whatever the caller's spelling: code hosts ignore case. */
export const repoKey = (repoUrl: string) => repoUrl.toLowerCase();

export async function listMemory(deps: Pick<Deps, 'db'>, workspaceId: string, repo: string): Promise<MemoryItem[]> {
  const rows = await deps.db
    .select()
    .from(repoMemory)
    .where(and(eq(repoMemory.workspaceId, workspaceId), eq(repoMemory.repo, repoKey(repo))))
    .orderBy(desc(repoMemory.createdAt), desc(repoMemory.id));
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind as MemoryKind,
    content: r.content as MemoryItem['content'],
    taskId: r.taskId,
    createdAt: r.createdAt,
  }));
}

/** The newest test command that worked for this account and repository. */
export async function rememberedTestCommand(
  deps: Pick<Deps, 'db'>,
  workspaceId: string,
  repo: string,
): Promise<string | undefined> {
  const item = (await listMemory(deps, workspaceId, repo)).find((m) => m.kind === 'test_command');
  return (item?.content as TestCommandContent | undefined)?.command;
}

// Memory is quoted into prompts inside other text, so a cut is marked briefly.
const CUT = { marker: '\n… (cut)' };

/** How an item reads in a model's prompt. */
export function memoryText(item: MemoryItem): string {
  if (item.kind === 'lesson') {
    const c = item.content as LessonContent;
    const files = c.files.length ? `; files: ${c.files.slice(0, 8).join(', ')}` : '';
    return `Lesson from an earlier task ("${clip(c.prompt, 200, CUT)}"${files}): ${clip(c.note, 2000, CUT)}`;
  }
  if (item.kind === 'example') {
    const c = item.content as ExampleContent;
    const plan = c.plan?.summary ? `\nPlan: ${clip(c.plan.summary, 400, CUT)}` : '';
    return `Worked example the reviewer approved for "${clip(c.prompt, 200, CUT)}":${plan}\nDiff:\n${clip(c.diff, 4000, CUT)}`;
  }
  return `Test command that worked: ${(item.content as TestCommandContent).command}`;
}

export interface Recalled {
  id: string;
  kind: MemoryKind;
  text: string;
}

/**
 * The lessons and examples most relevant to a new prompt on the same repository, within a
 * token budget: ranked by shared words with the prompt (code-aware tokens), newer first on
 * ties. Only this account's items for this repository are ever read.
 */
export async function recall(
  deps: Pick<Deps, 'db'>,
  q: { workspaceId: string; repo: string | null; prompt: string; tokenBudget: number; kinds?: MemoryKind[] },
): Promise<Recalled[]> {
  if (!q.repo) return [];
  const kinds = q.kinds ?? ['lesson', 'example'];
  const items = (await listMemory(deps, q.workspaceId, q.repo)).filter((m) => kinds.includes(m.kind));
  const want = new Set(tokenize(q.prompt));
  const scored = items.map((item, order) => {
    const text = memoryText(item);
    const words = new Set(tokenize(text));
    let shared = 0;
    for (const w of want) if (words.has(w)) shared++;
    // Lessons are short and corrective: they go first when equally relevant.
    return { item, text, score: shared / Math.sqrt(words.size + 1) + (item.kind === 'lesson' ? 0.05 : 0), order };
  });
  scored.sort((a, b) => b.score - a.score || a.order - b.order);
  const out: Recalled[] = [];
  let spent = 0;
  for (const s of scored) {
    const cost = estimateTokens(s.text.length);
    if (spent + cost > q.tokenBudget) continue;
    spent += cost;
    out.push({ id: s.item.id, kind: s.item.kind, text: s.text });
  }
  return out;
}

/** The database or a transaction on it: the feedback module writes memory inside its own transaction. */

/** Removes the items of these kinds that a task produced (a later feedback post replaces them). */
export async function forgetTaskItems(db: Db, workspaceId: string, taskId: string, kinds: MemoryKind[]): Promise<void> {
  await db
    .delete(repoMemory)
    .where(
      and(eq(repoMemory.workspaceId, workspaceId), eq(repoMemory.taskId, taskId), inArray(repoMemory.kind, kinds)),
    );
}

/** Inserts an item through `db` (which may be a transaction); the repository is keyed by repoKey. */
export async function insertMemoryItem(
  db: Db,
  now: Date,
  item: { workspaceId: string; repo: string; kind: MemoryKind; content: MemoryItem['content']; taskId?: string | null },
): Promise<string> {
  const id = newId();
  await db.insert(repoMemory).values({
    id,
    workspaceId: item.workspaceId,
    repo: repoKey(item.repo),
    kind: item.kind,
    content: item.content,
    taskId: item.taskId ?? null,
    createdAt: now,
  });
  return id;
}

/**
 * The test command that worked, replacing any older one for the account and repository; the item
 * already there is kept when it holds the same command (every passing task on a repository finds
 * detection's command again: no write for it).
 */
export async function replaceTestCommand(
  deps: Pick<Deps, 'db' | 'clock'>,
  q: { workspaceId: string; repo: string; command: string; taskId?: string | null },
): Promise<string> {
  return deps.db.transaction(async (tx) => {
    const theirs = and(
      eq(repoMemory.workspaceId, q.workspaceId),
      eq(repoMemory.repo, repoKey(q.repo)),
      eq(repoMemory.kind, 'test_command'),
    );
    const held = await tx.select({ id: repoMemory.id, content: repoMemory.content }).from(repoMemory).where(theirs);
    const [only] = held;
    if (held.length === 1 && only && (only.content as TestCommandContent).command === q.command) return only.id;
    await tx.delete(repoMemory).where(theirs);
    return insertMemoryItem(tx, deps.clock.now(), {
      workspaceId: q.workspaceId,
      repo: q.repo,
      kind: 'test_command',
      content: { command: q.command },
      taskId: q.taskId,
    });
  });
}

/** Deletes one of the account's items; false when the account has no item with that id. */
export async function deleteMemoryItem(deps: Pick<Deps, 'db'>, workspaceId: string, id: string): Promise<boolean> {
  const rows = await deps.db
    .delete(repoMemory)
    .where(and(eq(repoMemory.id, id), eq(repoMemory.workspaceId, workspaceId)))
    .returning({ id: repoMemory.id });
  return rows.length > 0;
}
