import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import type { Config } from '../config/config.js';
import { secretKeyPath } from '../secrets/key.js';
import { type ArchiveEntry, readArchive, writeArchive } from './backup-archive.js';
import { openPglite } from './client.js';
import { acquireDataDirLock, lockHolder } from './data-dir-lock.js';
import { openClientDatabase, pgliteDir } from './open.js';

/**
 * `emend backup` and `emend restore` of the embedded database: a physical copy of the PGlite
 * data dir (pgdata) taken while nothing writes to it, with the data dir's secret.key.
 *
 * With a server running, the copy is made through its socket: an open transaction on the
 * socket holds PGlite's only session (src/db/pglite-socket.ts), so the server's own queries
 * wait until it ends. Inside it a CHECKPOINT writes every committed change to the files, and
 * the files are then copied: a snapshot as of that moment, every transaction in it committed
 * or absent. Writes pause for the copy (a second or two for a small database) and go on after.
 * Without a server the command opens the data dir itself under the lock and does the same.
 */

export const BACKUP_MANIFEST = 'emend-backup.json';
const FORMAT = 1;

export interface BackupManifest {
  format: number;
  created_at: string;
  /** Whether the data dir's secret.key is in the backup (not when the key came from EMEND_SECRET_KEY). */
  secret_key: boolean;
}

export interface BackupResult {
  bytes: number;
  files: number;
  secretKey: boolean;
  /** Whether the copy was taken through a running server's socket. */
  throughServer: boolean;
}

/** Every directory and file under root, directories first, as archive entries named under `as`. */
function* tree(root: string, as: string): Generator<{ path: string; full: string; dir: boolean; mode: number }> {
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    const name = `${[as, relative(root, dir)].filter(Boolean).join('/').split(sep).join('/')}/`;
    yield { path: name, full: dir, dir: true, mode: statSync(dir).mode };
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) stack.push(full);
      else if (entry.isFile()) yield { path: `${name}${entry.name}`, full, dir: false, mode: statSync(full).mode };
    }
  }
}

/** Writes a backup of the data dir's database to `file` (which must not exist yet). */
export async function backupDataDir(config: Config, file: string, now = new Date()): Promise<BackupResult> {
  if (existsSync(file)) throw new BackupError(`${file} exists already; name a new file`);
  if (!existsSync(pgliteDir(config.dataDir)))
    throw new BackupError(`there is no database in ${config.dataDir} (no pgdata): nothing to back up`);
  const database = await openClientDatabase(config, { waitMs: 10_000, connections: 1 });
  const partial = `${file}.partial`;
  let files = 0;
  const keyPath = secretKeyPath(config.dataDir);
  const secretKey = !config.secretKey && existsSync(keyPath);
  const manifest: BackupManifest = { format: FORMAT, created_at: now.toISOString(), secret_key: secretKey };
  async function* entries(): AsyncGenerator<ArchiveEntry> {
    yield { path: BACKUP_MANIFEST, mode: 0o600, content: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) };
    if (secretKey) yield { path: 'secret.key', mode: 0o600, content: readFileSync(keyPath) };
    for (const e of tree(pgliteDir(config.dataDir), 'pgdata')) {
      if (e.dir) yield { path: e.path, mode: e.mode };
      else {
        files++;
        yield { path: e.path, mode: e.mode, content: readFileSync(e.full) };
      }
    }
  }
  try {
    rmSync(partial, { force: true });
    if (database.pglite) {
      // Ours alone under the lock: flush, then copy.
      await database.pglite.exec('CHECKPOINT');
      await writeArchive(partial, entries(), now);
    } else {
      const client = await database.pool!.connect();
      try {
        await client.query('BEGIN');
        await client.query('CHECKPOINT');
        await writeArchive(partial, entries(), now);
        await client.query('COMMIT');
      } finally {
        client.release();
      }
    }
    renameSync(partial, file);
  } catch (err) {
    rmSync(partial, { force: true });
    throw err;
  } finally {
    await database.close();
  }
  return { bytes: statSync(file).size, files, secretKey, throughServer: !database.pglite };
}

/** A refusal of backup or restore the operator can act on (exit 1, the message alone). */
export class BackupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BackupError';
  }
}

/** What is in the data dir besides the lock and the socket: a restore would replace the database in it. */
function occupied(dataDir: string): string[] {
  if (!existsSync(dataDir)) return [];
  const ignore = new Set(['emend.lock', '.s.PGSQL.5432', '.s.PGSQL.5432.lock.out']);
  return readdirSync(dataDir).filter((n) => !ignore.has(n));
}

/** Safe relative path inside the restore: no absolute paths, no `..`. */
function inside(root: string, path: string): string {
  const parts = path.split('/').filter((p) => p !== '' && p !== '.');
  if (path.startsWith('/') || parts.includes('..')) throw new BackupError(`the backup holds an unsafe path: ${path}`);
  return join(root, ...parts);
}

export interface RestoreResult {
  files: number;
  secretKey: boolean;
  created_at: string;
}

/**
 * Restores a backup into the data dir: refused while any emend process holds it, and when it
 * holds anything unless `force` (then its database and secret.key are replaced, the rest kept).
 * Unpacked beside, checked by opening it, then moved into place.
 */
export async function restoreDataDir(config: Config, file: string, force: boolean): Promise<RestoreResult> {
  if (!existsSync(file)) throw new BackupError(`${file} does not exist`);
  const holder = lockHolder(config.dataDir);
  if (holder)
    throw new BackupError(
      `an emend ${holder.role === 'serve' ? 'server' : 'command'} (pid ${holder.pid}) is using ${config.dataDir}; stop it before restoring`,
    );
  const present = occupied(config.dataDir);
  if (present.length > 0 && !force)
    throw new BackupError(
      `${config.dataDir} is not empty (${present.slice(0, 4).join(', ')}${present.length > 4 ? ', …' : ''}); ` +
        'restore into a new data dir, or pass --force to replace its database and secret.key',
    );
  const release = acquireDataDirLock(config.dataDir, 'cli');
  const staging = join(config.dataDir, `restore.${process.pid}.tmp`);
  try {
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true, mode: 0o700 });
    let manifest: BackupManifest | undefined;
    let files = 0;
    for await (const entry of readArchive(file)) {
      if (entry.path === BACKUP_MANIFEST) {
        manifest = JSON.parse(entry.content?.toString('utf8') ?? '{}') as BackupManifest;
        if (manifest.format !== FORMAT) throw new BackupError(`unknown backup format ${String(manifest.format)}`);
        continue;
      }
      const target = inside(staging, entry.path);
      if (!entry.content) mkdirSync(target, { recursive: true, mode: 0o700 });
      else {
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        writeFileSync(target, entry.content, { mode: entry.mode & 0o777 });
        files++;
      }
    }
    if (!manifest || !existsSync(join(staging, 'pgdata', 'PG_VERSION')))
      throw new BackupError(`${file} is not an emend backup (no ${BACKUP_MANIFEST} or no pgdata)`);
    // Opening it replays what the copy's WAL holds and proves it is a database.
    const check = await openPglite(join(staging, 'pgdata'));
    await check.close();
    rmSync(pgliteDir(config.dataDir), { recursive: true, force: true });
    renameSync(join(staging, 'pgdata'), pgliteDir(config.dataDir));
    if (manifest.secret_key) {
      renameSync(join(staging, 'secret.key'), secretKeyPath(config.dataDir));
    } else if (force) {
      // The data dir's old key does not decrypt the restored secrets; the one the backup was made with must come from EMEND_SECRET_KEY.
      rmSync(secretKeyPath(config.dataDir), { force: true });
    }
    return { files, secretKey: manifest.secret_key, created_at: manifest.created_at };
  } finally {
    rmSync(staging, { recursive: true, force: true });
    release();
  }
}
