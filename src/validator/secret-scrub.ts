import { lstat, open, readdir, unlink } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Files larger than this are not read; a secret written by a setup lands in a small config file. */
const MAX_FILE_BYTES = 64 * 1024 * 1024;
/** Values shorter than this are not looked for (they would match by chance). */
const MIN_SECRET_CHARS = 4;

/**
 * Removes every regular file under `dir` that holds one of the setup-only secrets (an .npmrc
 * the setup wrote with a token expanded, a credentials file): what the setup leaves for the test
 * phase, the cached environment and the checkout must not carry them. Symbolic links are not
 * followed. Returns the removed files, relative to `dir`.
 */
export async function removeFilesHoldingSecrets(dir: string, secrets: string[]): Promise<string[]> {
  const needles = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_CHARS))].map((s) => Buffer.from(s));
  if (needles.length === 0) return [];
  const removed: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) stack.push(path);
      else if (entry.isFile() && (await holdsAny(path, needles))) {
        await unlink(path);
        removed.push(relative(dir, path));
      }
    }
  }
  return removed.sort();
}

async function holdsAny(path: string, needles: Buffer[]): Promise<boolean> {
  const info = await lstat(path).catch(() => undefined);
  if (!info?.isFile() || info.size === 0 || info.size > MAX_FILE_BYTES) return false;
  const longest = Math.max(...needles.map((n) => n.length));
  const handle = await open(path, 'r').catch(() => undefined);
  if (!handle) return false;
  try {
    // Read in chunks that overlap by the longest needle, so one across a boundary is found too.
    const chunk = Buffer.alloc(1024 * 1024 + longest);
    let carry = 0;
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(chunk, carry, chunk.length - carry, position);
      if (bytesRead === 0) return false;
      const view = chunk.subarray(0, carry + bytesRead);
      if (needles.some((n) => view.includes(n))) return true;
      position += bytesRead;
      carry = Math.min(longest - 1, view.length);
      view.copy(chunk, 0, view.length - carry);
    }
  } finally {
    await handle.close();
  }
}
