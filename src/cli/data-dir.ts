import { existsSync } from 'node:fs';
import type { Config } from '../config/config.js';

/**
 * A CLI command that would make a fresh embedded database where a server runs on another one:
 * `./data` is relative to where the command runs, so `emend accounts create` from another
 * directory made an account in a new, empty database the server never reads.
 */
export class StrayDataDirError extends Error {
  constructor(dataDir: string, server: string) {
    super(
      `there is no data dir at ${dataDir}, and an emend server answers on ${server}: it keeps its data elsewhere. ` +
        "Run this command in the directory the server was started in, or set EMEND_DATA_DIR (or --data-dir) to the server's data dir; " +
        `to make a new, empty one here, give it explicitly: --data-dir ${dataDir}`,
    );
    this.name = 'StrayDataDirError';
  }
}

/** An emend server's /health (its answer has these fields), or false for anything else or no answer. */
async function emendAnswers(url: string, timeoutMs: number): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    const body = (await res.json()) as Record<string, unknown>;
    return typeof body.ok === 'boolean' && typeof body.database === 'string' && typeof body.sandbox === 'object';
  } catch {
    return false;
  }
}

/**
 * Refuses to create the embedded data dir when it was not named (EMEND_DATA_DIR or --data-dir,
 * `explicit`), does not exist yet, and an emend server answers on this configuration's port on
 * loopback: that server's data is elsewhere. An existing or named data dir, or PostgreSQL, is
 * opened as before.
 */
export async function refuseStrayDataDir(config: Config, explicit: boolean, timeoutMs = 1_500): Promise<void> {
  if (config.databaseUrl || explicit || existsSync(config.dataDir)) return;
  const server = `http://127.0.0.1:${config.port}`;
  if (await emendAnswers(`${server}/health`, timeoutMs)) throw new StrayDataDirError(config.dataDir, server);
}

/** The line that names what a command opened, for stderr. */
export function openedLine(config: Config, direct: boolean): string {
  if (config.databaseUrl) return 'emend: database: PostgreSQL (DATABASE_URL)';
  return `emend: data dir ${config.dataDir} (${direct ? 'opened directly' : "through the running server's socket"})`;
}
