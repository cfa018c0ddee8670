import { mkdir, rm } from 'node:fs/promises';
import { ConfinedDir } from '../checkout/confined-fs.js';
import { checkSitePath } from './store.js';

/**
 * Writes a site's files into `dir`, emptied first (the scaffold fixer edits them there,
 * deploy-git commits them). Each path is checked again: rows may come from any writer. Writes
 * go through the confined file module, so nothing lands outside `dir` whatever the paths say.
 */
export async function writeSiteDir(dir: string, files: { path: string; content: Buffer }[]): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const site = new ConfinedDir(dir);
  for (const f of files) site.write(checkSitePath(f.path), f.content, { mode: 'create', mkdirs: true });
}

/**
 * Every regular file under dir, as site paths ('/'-separated) with their bytes: read through
 * the confined file module (no link is followed out of dir, no FIFO is read).
 */
export async function readSiteDir(dir: string): Promise<{ path: string; content: Buffer }[]> {
  const site = new ConfinedDir(dir);
  const out: { path: string; content: Buffer }[] = [];
  for (const path of site.walkFiles()) {
    const got = site.read(path);
    if (got.ok) out.push({ path, content: got.bytes });
  }
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
