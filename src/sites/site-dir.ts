import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { checkSitePath } from './store.js';

/**
 * Writes a site's files into `dir`, emptied first (the scaffold fixer edits them there,
 * deploy-git commits them). Each path is checked again: rows may come from any writer.
 */
export async function writeSiteDir(dir: string, files: { path: string; content: Buffer }[]): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const f of files) {
    const target = join(dir, checkSitePath(f.path));
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, f.content);
  }
}

/** Every file under dir, as site paths ('/'-separated) with their bytes. */
export async function readSiteDir(dir: string): Promise<{ path: string; content: Buffer }[]> {
  const out: { path: string; content: Buffer }[] = [];
  const walk = async (at: string) => {
    for (const entry of await readdir(at, { withFileTypes: true })) {
      const p = join(at, entry.name);
      if (entry.isDirectory()) await walk(p);
      else if (entry.isFile()) out.push({ path: relative(dir, p).split('\\').join('/'), content: await readFile(p) });
    }
  };
  await walk(dir);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}
