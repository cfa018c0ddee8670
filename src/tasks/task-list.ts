import { createHmac, timingSafeEqual } from 'node:crypto';
import { type SQL, and, desc, eq, gte, isNotNull, isNull, lt, sql } from 'drizzle-orm';
import { tasks } from '../db/schema.js';
import { inTimeRange, timeParameter } from '../db/time-range.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { parseRepoUrl } from '../scm/urls.js';
import type { TaskStatus } from './states.js';
import type { Task } from './task.js';

/** The most a page holds, and the default: GET /v1/tasks has always answered the last 100. */
export const TASK_PAGE_MAX = 100;

export interface TaskListQuery {
  limit?: number;
  cursor?: string;
  status?: TaskStatus;
  task_type?: 'fix' | 'scaffold';
  repo_url?: string;
  parent_id?: string;
  /** The account that asked for them (one's own: one's id from GET /v1/me). */
  created_by?: string;
  /** api: made through the API; code_host: started by a trigger. */
  origin?: 'api' | 'code_host';
  created_after?: string;
  created_before?: string;
}

export interface TaskPage {
  tasks: Task[];
  /** The cursor of the page after this one; absent on the last page. */
  next?: string;
}

interface Position {
  createdAt: Date;
  id: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type CursorDeps = Pick<Deps, 'secretKey'>;

// The purpose is in what is signed, so no other signature made with the service's key (OAuth
// states, webhook payloads) can pass for a cursor's.
const sign = (key: Buffer, payload: string) =>
  createHmac('sha256', key).update(`emend-task-cursor:${payload}`).digest('base64url');

/**
 * A position in the newest-first order, opaque to clients: base64url of the last row's time and
 * id, a dot, and its HMAC with the service's key. Signed, so a page only ever starts where a page
 * of this service ended: a crafted cursor is refused whole, before anything in it is read.
 */
export function encodeCursor(deps: CursorDeps, p: Position): string {
  const payload = Buffer.from(JSON.stringify([p.createdAt.toISOString(), p.id])).toString('base64url');
  return `${payload}.${sign(deps.secretKey, payload)}`;
}

function decodeCursor(deps: CursorDeps, cursor: string): Position {
  const bad = () =>
    new AppError('bad_request', 'cursor: not a cursor this service gave (take it from the Link header)');
  const [payload, mac, ...rest] = cursor.split('.');
  if (!payload || !mac || rest.length > 0) throw bad();
  // Bytes, not characters: a MAC of the right length holding a non-ASCII character would make
  // timingSafeEqual throw (a 500) if the lengths compared were the strings'.
  const given = Buffer.from(mac);
  const expected = Buffer.from(sign(deps.secretKey, payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw bad();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw bad();
  const [at, id] = parsed as unknown[];
  // A signed cursor holds what encodeCursor wrote; its time is still read back strictly (the very
  // text toISOString gives, in range), so that a row stored out of range or a leaked key can only
  // ever make a 400, never a query PostgreSQL refuses.
  const createdAt = typeof at === 'string' ? new Date(at) : new Date(Number.NaN);
  if (!inTimeRange(createdAt) || createdAt.toISOString() !== at) throw bad();
  if (typeof id !== 'string' || !UUID.test(id)) throw bad();
  return { createdAt, id };
}

/** The WHERE of a page: the account, the filters, and the keyset position after the cursor. */
function conditions(deps: Pick<Deps, 'config' | 'secretKey'>, workspaceId: string, q: TaskListQuery): SQL[] {
  const where: SQL[] = [eq(tasks.workspaceId, workspaceId)];
  if (q.status) where.push(eq(tasks.status, q.status));
  if (q.task_type) where.push(eq(tasks.taskType, q.task_type));
  if (q.parent_id) where.push(eq(tasks.parentId, q.parent_id));
  if (q.created_by) where.push(eq(tasks.createdBy, q.created_by));
  if (q.origin) where.push(q.origin === 'api' ? isNull(tasks.trigger) : isNotNull(tasks.trigger));
  if (q.repo_url !== undefined) {
    // The same repository however it is written (.git, a trailing slash, letter case: code hosts ignore it).
    const repo = parseRepoUrl(q.repo_url, deps.config);
    where.push(sql`lower(${tasks.repoOwner}) = ${repo.owner.toLowerCase()}`);
    where.push(sql`lower(${tasks.repoName}) = ${repo.name.toLowerCase()}`);
    // Two hosts can hold the same OWNER/NAME: the whole address settles it (checked on the rows the index found).
    where.push(sql`lower(${tasks.repoUrl}) = ${repo.url.toLowerCase()}`);
  }
  // The route's schema has checked these already; checked again here, so that no other caller of
  // the list (the bench, a script) can send the database a time it refuses.
  if (q.created_after !== undefined) {
    where.push(gte(tasks.createdAt, timeParameter('created_after', q.created_after)));
  }
  if (q.created_before !== undefined) {
    where.push(lt(tasks.createdAt, timeParameter('created_before', q.created_before)));
  }
  if (q.cursor !== undefined) {
    const at = decodeCursor(deps, q.cursor);
    // A row comparison, not an OR of two: PostgreSQL walks the (workspace_id, created_at, id) index from it.
    where.push(sql`(${tasks.createdAt}, ${tasks.id}) < (${at.createdAt.toISOString()}::timestamptz, ${at.id}::uuid)`);
  }
  return where;
}

/** The query of a page (one row more than the page, to know whether another follows); bench/ explains it. */
export function taskPageQuery(deps: Pick<Deps, 'db' | 'config' | 'secretKey'>, workspaceId: string, q: TaskListQuery) {
  return deps.db
    .select()
    .from(tasks)
    .where(and(...conditions(deps, workspaceId, q)))
    .orderBy(desc(tasks.createdAt), desc(tasks.id))
    .limit((q.limit ?? TASK_PAGE_MAX) + 1);
}

/**
 * One page of the caller's tasks, newest first (created_at, then id, both descending), after the
 * cursor when one is given. Keyset paging: a page costs the same at any depth, and a task created
 * while a client pages does not shift the pages it has not read yet.
 */
export async function listTaskPage(
  deps: Pick<Deps, 'db' | 'config' | 'secretKey'>,
  workspaceId: string,
  q: TaskListQuery,
): Promise<TaskPage> {
  const limit = q.limit ?? TASK_PAGE_MAX;
  const rows = await taskPageQuery(deps, workspaceId, q);
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return rows.length > limit && last ? { tasks: page, next: encodeCursor(deps, last) } : { tasks: page };
}
