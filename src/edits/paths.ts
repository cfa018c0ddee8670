import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

/**
 * Turns a path from the model's answer into one inside the checkout, or a reason it is refused.
 * The answer is untrusted text: a path may try to leave the repository lexically (`..`, absolute),
 * through a symlink already in the checkout, or reach into `.git` (hooks would run code later).
 */
export type Resolved = { ok: true; rel: string; abs: string } | { ok: false; reason: string };

export async function resolveInside(rootReal: string, path: string): Promise<Resolved> {
  if (path.includes('\0')) return { ok: false, reason: 'the path contains a NUL character' };
  // Backslashes are Windows separators in a model's answer far more often than file-name characters.
  const p = path.trim().replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.startsWith('~')) {
    return { ok: false, reason: 'absolute paths are refused; give the path relative to the repository root' };
  }
  const segments = p.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return { ok: false, reason: '".." is refused in paths; give the path relative to the repository root' };
  if (segments.length === 0) return { ok: false, reason: 'the path is empty' };
  // Case-insensitive: on a case-insensitive file system `.GIT` is the same directory.
  if (segments.some((s) => s.toLowerCase() === '.git')) return { ok: false, reason: 'paths inside .git are refused' };
  const rel = segments.join('/');
  const abs = join(rootReal, ...segments);

  // The deepest existing ancestor (or the path itself) decides where a write really lands.
  for (let cur = abs; ; cur = dirname(cur)) {
    let real: string;
    try {
      real = await realpath(cur);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      // A dangling symlink: writing through it would create its target, wherever that is.
      const isLink = await lstat(cur).then((st) => st.isSymbolicLink(), () => false);
      if (isLink) return { ok: false, reason: `${relative(rootReal, cur) || rel} is a symlink to a missing target; refused` };
      if (cur === rootReal || dirname(cur) === cur) return { ok: false, reason: 'the repository root does not exist' };
      continue;
    }
    const inside = relative(rootReal, real);
    if (inside === '') return cur === abs ? { ok: false, reason: 'the path names the repository root' } : { ok: true, rel, abs };
    if (inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
      return { ok: false, reason: `the path resolves outside the repository (through a symlink); refused` };
    }
    if (inside.split(sep)[0]!.toLowerCase() === '.git') return { ok: false, reason: 'the path resolves into .git (through a symlink); refused' };
    return { ok: true, rel, abs };
  }
}
