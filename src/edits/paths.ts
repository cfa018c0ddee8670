import { type PathInfo, describePath } from '../checkout/confined-fs.js';

/**
 * Turns a path from the model's answer into one relative to the checkout, or a reason it is
 * refused. The answer is untrusted text: a path may try to leave the repository lexically
 * (`..`, absolute) or reach into `.git` (hooks would run code later). Symlinks are the
 * confined file module's business (src/checkout/confined-fs.ts): whatever the path names is
 * read and written only if it resolves inside the checkout.
 */
export type Resolved = { ok: true; rel: string } | { ok: false; reason: string };

export function checkEditPath(path: string): Resolved {
  if (path.includes('\0')) return { ok: false, reason: 'the path contains a NUL character' };
  // Backslashes are Windows separators in a model's answer far more often than file-name characters.
  const p = path.trim().replace(/\\/g, '/');
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p) || p.startsWith('~')) {
    return { ok: false, reason: 'absolute paths are refused; give the path relative to the repository root' };
  }
  const segments = p.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..'))
    return { ok: false, reason: '".." is refused in paths; give the path relative to the repository root' };
  if (segments.length === 0) return { ok: false, reason: 'the path is empty' };
  // Case-insensitive: on a case-insensitive file system `.GIT` is the same directory.
  if (segments.some((s) => s.toLowerCase() === '.git')) return { ok: false, reason: 'paths inside .git are refused' };
  return { ok: true, rel: segments.join('/') };
}

/** Why an edit cannot touch what the path names, for the model: it may choose another file. */
export function editRefusal(rel: string, info: PathInfo): string {
  if (info.kind === 'outside' && info.into) return `the path resolves into ${info.into} (through a symlink); refused`;
  if (info.kind === 'outside')
    return `${describePath(rel, info)}, so it cannot be edited (edit the files inside the repository instead)`;
  if (info.kind === 'dir') return 'not a regular file (a directory?)';
  return describePath(rel, info);
}
