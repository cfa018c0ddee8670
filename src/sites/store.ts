import { and, asc, eq } from 'drizzle-orm';
import { siteFiles } from '../db/schema.js';
import type { Deps } from '../deps.js';
import { AppError } from '../errors.js';
import { newId } from '../ids.js';
import { contentTypeOf } from './site-files.js';

/**
 * The files of a scaffold task's site, kept in the database so every API node can serve
 * them and deploy-git can push them. A task has one set, replaced as a whole.
 */

export interface SiteFileInput {
  /** Relative and '/'-separated: `index.html`, `assets/logo.svg`. */
  path: string;
  /** Text is stored as UTF-8. */
  content: Buffer | string;
  /** Guessed from the extension when absent. */
  contentType?: string;
}

export interface SiteFileInfo {
  path: string;
  contentType: string;
  size: number;
  createdAt: Date;
}

export interface SiteFile extends SiteFileInfo {
  content: Buffer;
}

type StoreDeps = Pick<Deps, 'db' | 'clock'>;

const MAX_PATH_LENGTH = 500;

/** One table of content types for the store, the validator's browser and the site routes. */
export { contentTypeOf };

/**
 * The path if it may be written into a checkout and served: relative, '/'-separated, no
 * empty, `.` or `..` segment, no `.git` segment (in any case: git on a case-insensitive
 * disk treats `.GIT` as `.git`), no backslash or control character. Throws bad_request.
 */
export function checkSitePath(path: string): string {
  const bad = (why: string) =>
    new AppError('bad_request', `site file path ${JSON.stringify(path.slice(0, 100))}: ${why}`);
  if (path.length === 0 || path.length > MAX_PATH_LENGTH) throw bad(`must be 1 to ${MAX_PATH_LENGTH} characters`);
  if (path.startsWith('/')) throw bad('must be relative (no leading /)');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this refuses.
  if (/[\\\x00-\x1f\x7f]/.test(path)) throw bad('must not contain a backslash or control characters');
  for (const segment of path.split('/')) {
    if (segment === '' || segment === '.') throw bad('has an empty or "." segment');
    if (segment === '..') throw bad('must not contain ".."');
    if (segment.toLowerCase() === '.git') throw bad('must not name .git');
  }
  return path;
}

/** Replaces the task's site with `files`, in one transaction: readers see the old set or the new one. */
export async function saveSiteFiles(deps: StoreDeps, taskId: string, files: SiteFileInput[]): Promise<SiteFileInfo[]> {
  const now = deps.clock.now();
  const seen = new Set<string>();
  const rows = files.map((f) => {
    const path = checkSitePath(f.path);
    if (seen.has(path)) throw new AppError('bad_request', `site file path ${JSON.stringify(path)}: given twice`);
    seen.add(path);
    const content = typeof f.content === 'string' ? Buffer.from(f.content, 'utf8') : f.content;
    return {
      id: newId(),
      taskId,
      path,
      content,
      contentType: f.contentType ?? contentTypeOf(path),
      size: content.length,
      createdAt: now,
    };
  });
  await deps.db.transaction(async (tx) => {
    await tx.delete(siteFiles).where(eq(siteFiles.taskId, taskId));
    if (rows.length > 0) await tx.insert(siteFiles).values(rows);
  });
  return rows
    .map(({ path, contentType, size, createdAt }) => ({ path, contentType, size, createdAt }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
}

/** The task's files without their content, by path. */
export async function listSiteFiles(deps: Pick<Deps, 'db'>, taskId: string): Promise<SiteFileInfo[]> {
  return deps.db
    .select({
      path: siteFiles.path,
      contentType: siteFiles.contentType,
      size: siteFiles.size,
      createdAt: siteFiles.createdAt,
    })
    .from(siteFiles)
    .where(eq(siteFiles.taskId, taskId))
    .orderBy(asc(siteFiles.path));
}

/** A file's columns, as SiteFile has them. */
const SITE_FILE_COLUMNS = {
  path: siteFiles.path,
  content: siteFiles.content,
  contentType: siteFiles.contentType,
  size: siteFiles.size,
  createdAt: siteFiles.createdAt,
};

/** One file with its content, or null when the task has no file at that path. */
export async function readSiteFile(deps: Pick<Deps, 'db'>, taskId: string, path: string): Promise<SiteFile | null> {
  const [row] = await deps.db
    .select(SITE_FILE_COLUMNS)
    .from(siteFiles)
    .where(and(eq(siteFiles.taskId, taskId), eq(siteFiles.path, path)))
    .limit(1);
  return row ?? null;
}

/** Every file with its content, by path (deploy-git pushes them all). */
export async function readSiteFiles(deps: Pick<Deps, 'db'>, taskId: string): Promise<SiteFile[]> {
  return deps.db
    .select(SITE_FILE_COLUMNS)
    .from(siteFiles)
    .where(eq(siteFiles.taskId, taskId))
    .orderBy(asc(siteFiles.path));
}
