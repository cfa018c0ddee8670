import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LocatorIndex } from './rank.js';

/** Bumped when the index format or what goes into it changes: old cache files are then ignored. */
// 3: files read only inside the checkout (indexes built before could hold files reached through links out)
// 4: the repository's own Python imports per file (`imports`)
// 5: JavaScript/TypeScript imports too
// 6: files a build made (`generated`)
// 7: the project's declared names (`project`)
export const INDEX_VERSION = 7;

/**
 * The cache key of a checkout: its HEAD commit, when the working tree is clean (no changes,
 * no untracked files). A dirty tree or a directory that is not a git checkout has none, and
 * its index is built every time.
 */
export function cacheKey(repoDir: string): string | null {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', repoDir, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const sha = git('rev-parse', 'HEAD').trim();
    if (!/^[0-9a-f]{40,64}$/.test(sha)) return null;
    if (git('status', '--porcelain', '--untracked-files=normal').trim() !== '') return null;
    return sha;
  } catch {
    return null;
  }
}

const cacheFile = (cacheDir: string, key: string) => join(cacheDir, `locator-v${INDEX_VERSION}-${key}.json`);

export function loadCachedIndex(cacheDir: string, key: string): LocatorIndex | null {
  try {
    const index = JSON.parse(readFileSync(cacheFile(cacheDir, key), 'utf8')) as LocatorIndex;
    return index.version === INDEX_VERSION ? index : null;
  } catch {
    return null; // absent, or unreadable: rebuild
  }
}

/** Writes the index for the key; a temporary file renamed into place, so a reader never sees half of one. */
export function saveCachedIndex(cacheDir: string, key: string, index: LocatorIndex): void {
  mkdirSync(cacheDir, { recursive: true });
  const target = cacheFile(cacheDir, key);
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(tmp, JSON.stringify(index));
  renameSync(tmp, target);
}
