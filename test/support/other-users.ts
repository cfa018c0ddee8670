import { chmodSync, mkdtempSync, realpathSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

// Some tests hand files to another user: the PostgreSQL cluster runs as postgres when the tests
// run as root (test/support/postgres-cluster.ts), and the system check's non-root case runs as
// nobody (test/scripts/system-check.test.ts). Such a file must not sit in the checkout,
// which a newcomer may have cloned under /root or `mktemp -d` (mode 0700), nor under a private
// TMPDIR (/run/user/0, ~/tmp): whatever a file's own mode, no other user gets through a 0700
// directory above it.

/**
 * Whether a user who is neither the owner nor in the group can get to `path`: every directory
 * above it lets others through (o+x), and `path` itself grants others `bits` (0o004 read,
 * 0o001 execute or search). Follows symbolic links first, as the kernel would.
 */
export function othersCanReach(path: string, bits: number): boolean {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return false;
  }
  if ((statSync(real).mode & bits) !== bits) return false;
  for (let dir = dirname(real); ; dir = dirname(dir)) {
    if ((statSync(dir).mode & 0o001) === 0) return false;
    if (dir === '/') return true;
  }
}

/**
 * A new temporary directory with exactly `mode` (not the umask's), that other users can reach:
 * under os.tmpdir() when they can get there, otherwise under /tmp, which is world-writable and
 * sticky on every Linux.
 */
export function tempDirForOtherUsers(prefix: string, mode: number): string {
  const base = [tmpdir(), '/tmp'].find((dir) => othersCanReach(dir, 0o001));
  if (base === undefined) {
    throw new Error(
      `other users cannot get into ${tmpdir()} nor /tmp; the tests hand files to the postgres and nobody ` +
        'users there (chmod 1777 /tmp)',
    );
  }
  const dir = mkdtempSync(join(base, prefix));
  chmodSync(dir, mode);
  return dir;
}
