import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';

const EXIT_OK = 0;
const EXIT_REFUSED = 1;
const EXIT_USAGE = 2;

const BACKUP_USAGE = 'usage: emend backup FILE [--data-dir DIR]';
const RESTORE_USAGE = 'usage: emend restore FILE [--data-dir DIR] [--force]';

const POSTGRES =
  'emend backup and restore are for the embedded database; with DATABASE_URL the data is in PostgreSQL: ' +
  'back it up with pg_dump (e.g. `pg_dump --format=custom "$DATABASE_URL" > emend.dump`) and restore with pg_restore ' +
  '(docs/operations.md, "Back up and restore"); keep EMEND_SECRET_KEY with it';

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

type Archive = typeof import('../db/backup.js');

/**
 * What both commands share: FILE (and the options) parsed, usage errors exit 2, PostgreSQL sent to
 * pg_dump, and a refusal (BackupError) exit 1 with its words; `act` runs with the backup module.
 */
async function withArchive(
  args: string[],
  env: NodeJS.ProcessEnv,
  usage: string,
  options: { force?: { type: 'boolean' } },
  act: (archive: Archive, file: string, force: boolean, config: ReturnType<typeof loadConfig>) => Promise<void>,
): Promise<number> {
  let file: string;
  let force = false;
  try {
    const { positionals, values } = parseArgs({ args, allowPositionals: true, options });
    if (positionals.length !== 1) throw new Error(`${usage.split(' ')[2]} needs one FILE`);
    file = positionals[0]!;
    force = (values as { force?: boolean }).force === true;
  } catch (err) {
    console.error(`emend: ${err instanceof Error ? err.message : String(err)}\n\n${usage}`);
    return EXIT_USAGE;
  }
  const config = loadConfig(env);
  if (config.databaseUrl) {
    console.error(`emend: ${POSTGRES}`);
    return EXIT_USAGE;
  }
  const archive = await import('../db/backup.js');
  try {
    await act(archive, file, force, config);
    return EXIT_OK;
  } catch (err) {
    if (err instanceof archive.BackupError) {
      console.error(`emend: ${err.message}`);
      return EXIT_REFUSED;
    }
    throw err;
  }
}

/**
 * `emend backup FILE`: a consistent copy of the embedded database (and the data dir's
 * secret.key), also while `emend serve` runs on the data dir. Exit 0 written, 1 refused, 2 usage
 * or PostgreSQL (pg_dump is the tool there).
 */
export function backupCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return withArchive(args, env, BACKUP_USAGE, {}, async ({ backupDataDir }, file, _force, config) => {
    const done = await backupDataDir(config, file);
    console.error(
      `emend: backed up ${config.dataDir} to ${file} (${mb(done.bytes)}, ${done.files} files, ` +
        `${done.throughServer ? "through the running server's socket" : 'opened directly'})`,
    );
    console.error(
      done.secretKey
        ? `emend: the backup holds the data dir's secret.key (it decrypts the saved provider keys and code-host tokens): keep ${file} as safe as the key`
        : 'emend: NOTE: the secret key is NOT in the backup (it comes from EMEND_SECRET_KEY): keep that value with the backup, or the saved provider keys and code-host tokens cannot be decrypted after a restore',
    );
  });
}

/**
 * `emend restore FILE [--force]`: the backup into the data dir. Refused while an emend process
 * holds the data dir, and into a non-empty one without --force. Exit 0 restored, 1 refused, 2 usage.
 */
export function restoreCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return withArchive(
    args,
    env,
    RESTORE_USAGE,
    { force: { type: 'boolean' } },
    async ({ restoreDataDir }, file, force, config) => {
      const done = await restoreDataDir(config, file, force);
      console.error(`emend: restored ${file} (taken ${done.created_at}) into ${config.dataDir}, ${done.files} files`);
      if (!done.secretKey)
        console.error(
          'emend: the backup holds no secret.key: start the server with the EMEND_SECRET_KEY the backup was taken with',
        );
    },
  );
}
