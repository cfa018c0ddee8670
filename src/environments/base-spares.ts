import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from '../db/data-dir-lock.js';
import { type BasePack, type BaseRefs, giveTreeGit } from './tree-git.js';

/**
 * Checkouts of a base commit made ahead (docs/validator.md, "Spare checkouts"): after a service
 * validation's verdict, the base commit it ran on is checked out once more, from the pack that
 * validation made, into `<temporary directory>/emend-spare-base-<key>-<pid>-…/repo`; the next
 * validation on the same base renames it into place as its baseline's tree instead of writing the
 * same files again (the kernel's time, on ext4 up to a millisecond a file). A spare is what the
 * baseline's checkout would be, made by the same host git (`giveTreeGit`), and never run in
 * before it is taken: its key is everything its `.git` holds besides the pack (the commit, the
 * tags naming it, the checkout's `info/exclude`), and a rename succeeds for one taker only.
 */
const PREFIX = 'emend-spare-base-';
/** The spares one process keeps at most (one per key); the oldest go first. */
const KEPT_PER_PROCESS = 4;

/** The key of a base commit's checkout: all its `.git` holds besides the pack. */
export function baseSpareKey(commit: string, refs: Pick<BaseRefs, 'tags' | 'exclude'>): string {
  const named = JSON.stringify({ commit, tags: refs.tags, exclude: refs.exclude ?? null });
  return createHash('sha256').update(named).digest('hex').slice(0, 32);
}

/** Renames a spare checkout of this key to `dest` (which must not exist); false when none is ready. */
export async function takeBaseSpare(dir: string, key: string, dest: string): Promise<boolean> {
  const names = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith(`${PREFIX}${key}-`));
  for (const name of names) {
    // One taker wins; a spare still being made has no `repo` yet.
    if (
      !(await rename(join(dir, name, 'repo'), dest).then(
        () => true,
        () => false,
      ))
    )
      continue;
    await rm(join(dir, name), { recursive: true, force: true }).catch(() => {});
    return true;
  }
  return false;
}

/**
 * Checks the base commit out of `pack` into a new spare in `dir`, then leaves this process one
 * spare per key (at most KEPT_PER_PROCESS) and removes those of processes that are gone.
 */
export async function makeBaseSpare(pack: BasePack, dir: string): Promise<void> {
  const key = baseSpareKey(pack.commit, pack);
  const spare = await mkdtemp(join(dir, `${PREFIX}${key}-${process.pid}-`));
  try {
    const home = join(spare, 'git-home');
    await mkdir(home);
    await giveTreeGit(pack, join(spare, 'building'), 'checkout', { home });
    // Whole or not there: a taker renames `repo`.
    await rename(join(spare, 'building'), join(spare, 'repo'));
    await rm(home, { recursive: true, force: true });
  } catch (err) {
    await rm(spare, { recursive: true, force: true }).catch(() => {});
    throw err;
  }
  await prune(dir, spare);
}

async function prune(dir: string, made: string): Promise<void> {
  const mine: Array<{ path: string; key: string; at: number }> = [];
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const m = /^emend-spare-base-([0-9a-f]{32})-(\d+)-/.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    if (Number(m[2]) !== process.pid) {
      if (!processAlive(Number(m[2]))) await rm(path, { recursive: true, force: true }).catch(() => {});
      continue;
    }
    const at = await stat(path).then(
      (s) => s.mtimeMs,
      () => undefined,
    );
    if (at !== undefined) mine.push({ path, key: m[1]!, at });
  }
  // Newest first: the one just made, then one per other key.
  mine.sort((a, b) => (a.path === made ? -1 : b.path === made ? 1 : b.at - a.at));
  const keys = new Set<string>();
  for (const spare of mine) {
    if (keys.has(spare.key) || keys.size >= KEPT_PER_PROCESS) {
      await rm(spare.path, { recursive: true, force: true }).catch(() => {});
      continue;
    }
    keys.add(spare.key);
  }
}
