import { chmod, lstat, open, readdir, rm, unlink } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Values shorter than this are not looked for (they would match by chance). */
const MIN_SECRET_CHARS = 4;
/** Each read; chunks overlap by the longest secret, so one across a boundary is found too. */
const CHUNK_BYTES = 1024 * 1024;

/** What the scrub removed: files that held a secret, and entries it could not read (so could not clear). */
export interface Scrubbed {
  holding: string[];
  unreadable: string[];
}

/**
 * Removes every regular file under `dir` that holds one of the setup-only secrets (an .npmrc
 * the setup wrote with a token expanded, a credentials file): what the setup leaves for the test
 * phase, the cached environment and the checkout must not carry them. Every file is read whole,
 * whatever its size (a 1 GiB archive with the token at its end included): an exemption by size
 * would be a way to keep a secret. A file or directory the setup made unreadable is made readable
 * (the setup's files are the service user's own) and scanned; one that still cannot be read is
 * removed, since nobody can say it is clean. Symbolic links are not followed. Paths are relative
 * to `dir`, sorted.
 */
export async function removeFilesHoldingSecrets(dir: string, secrets: string[]): Promise<Scrubbed> {
  const needles = [...new Set(secrets.filter((s) => s.length >= MIN_SECRET_CHARS))].map((s) => Buffer.from(s));
  const out: Scrubbed = { holding: [], unreadable: [] };
  if (needles.length === 0) return out;
  const stack = [dir];
  while (stack.length > 0) {
    const current = stack.pop()!;
    const entries = await readdirOpening(current);
    if (!entries) {
      // The top itself unreadable is the caller's tree gone or broken, not the setup's doing: say so.
      if (current === dir) throw new Error(`secret scrub: cannot read ${dir}`);
      await rm(current, { recursive: true, force: true });
      out.unreadable.push(relative(dir, current));
      continue;
    }
    for (const entry of entries) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) stack.push(path);
      else if (entry.isFile()) {
        const holds = await holdsAny(path, needles);
        if (holds === false) continue;
        await unlink(path);
        (holds === 'unreadable' ? out.unreadable : out.holding).push(relative(dir, path));
      }
    }
  }
  out.holding.sort();
  out.unreadable.sort();
  return out;
}

async function readdirOpening(path: string) {
  try {
    return await readdir(path, { withFileTypes: true });
  } catch {
    await chmod(path, 0o700).catch(() => undefined);
    return readdir(path, { withFileTypes: true }).catch(() => undefined);
  }
}

async function openReading(path: string) {
  try {
    return await open(path, 'r');
  } catch {
    await chmod(path, 0o600).catch(() => undefined);
    return open(path, 'r').catch(() => undefined);
  }
}

async function holdsAny(path: string, needles: Buffer[]): Promise<boolean | 'unreadable'> {
  const info = await lstat(path).catch(() => undefined);
  if (!info?.isFile() || info.size === 0) return false;
  const longest = Math.max(...needles.map((n) => n.length));
  const handle = await openReading(path);
  if (!handle) return 'unreadable';
  try {
    const chunk = Buffer.alloc(CHUNK_BYTES + longest);
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
  } catch {
    return 'unreadable';
  } finally {
    await handle.close();
  }
}
