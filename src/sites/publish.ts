import { randomBytes } from 'node:crypto';
import { and, eq, isNull } from 'drizzle-orm';
import { siteScreenshots, tasks } from '../db/schema.js';
import type { Deps } from '../deps.js';

/** A slug from the brief's first words and a random suffix: readable, unguessable, unique. */
export function siteSlug(brief: string): string {
  const words = brief
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter((w) => w.length > 1 && !STOP.has(w))
    .slice(0, 4)
    .join('-')
    .slice(0, 40)
    .replace(/-+$/, '');
  const suffix = randomBytes(5).toString('hex').slice(0, 8);
  return words ? `${words}-${suffix}` : `site-${suffix}`;
}

const STOP = new Set([
  'a',
  'an',
  'the',
  'for',
  'of',
  'and',
  'to',
  'my',
  'our',
  'with',
  'site',
  'website',
  'page',
  'landing',
  'marketing',
  'make',
  'build',
  'create',
]);

/** The task's slug, made on first use (the guard keeps a resumed run from making a second one). */
export async function ensureSlug(
  deps: Pick<Deps, 'db'>,
  task: { id: string; prompt: string; siteSlug: string | null },
): Promise<string> {
  if (task.siteSlug) return task.siteSlug;
  const slug = siteSlug(task.prompt);
  const [row] = await deps.db
    .update(tasks)
    .set({ siteSlug: slug })
    .where(and(eq(tasks.id, task.id), isNull(tasks.siteSlug)))
    .returning({ slug: tasks.siteSlug });
  if (row?.slug) return row.slug;
  const [current] = await deps.db.select({ slug: tasks.siteSlug }).from(tasks).where(eq(tasks.id, task.id));
  return current!.slug!;
}

export const siteUrl = (deps: Pick<Deps, 'config'>, slug: string) => `${deps.config.siteBase}/s/${slug}/`;

/** The site goes live: deployed_url is what the site routes check before serving a file. */
export async function publishSite(deps: Pick<Deps, 'db' | 'config'>, taskId: string, slug: string): Promise<string> {
  const url = siteUrl(deps, slug);
  await deps.db.update(tasks).set({ deployedUrl: url }).where(eq(tasks.id, taskId));
  return url;
}

export async function saveScreenshots(
  deps: Pick<Deps, 'db' | 'clock'>,
  taskId: string,
  shots: Record<string, Buffer>,
): Promise<void> {
  const now = deps.clock.now();
  for (const [name, png] of Object.entries(shots)) {
    await deps.db
      .insert(siteScreenshots)
      .values({ taskId, name, png, createdAt: now })
      .onConflictDoUpdate({ target: [siteScreenshots.taskId, siteScreenshots.name], set: { png, createdAt: now } });
  }
}

export async function readScreenshot(
  deps: Pick<Deps, 'db'>,
  taskId: string,
  name: string,
): Promise<Buffer | undefined> {
  const [row] = await deps.db
    .select({ png: siteScreenshots.png })
    .from(siteScreenshots)
    .where(and(eq(siteScreenshots.taskId, taskId), eq(siteScreenshots.name, name)));
  return row?.png;
}
