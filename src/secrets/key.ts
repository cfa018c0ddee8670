import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { ConfigError } from '../config/error.js';
import { parseSecretKey } from '../config/secret-key.js';

export const secretKeyPath = (dataDir: string) => join(dataDir, 'secret.key');

/**
 * The key that encrypts provider keys and code-host tokens. Without EMEND_SECRET_KEY the
 * embedded default generates one into the data dir (mode 0600) and reuses it on every start.
 * With DATABASE_URL the key must come from the environment: every API node and worker
 * decrypts what the others stored, so a key generated per machine would not do.
 */
export function resolveSecretKey(config: Config): Buffer {
  if (config.secretKey) return config.secretKey;
  if (config.databaseUrl) {
    throw new ConfigError(
      'EMEND_SECRET_KEY',
      'must be set when DATABASE_URL is (every node shares one key): 32 bytes as 64 hex characters or base64, ' +
        'e.g. from `openssl rand -hex 32`',
    );
  }
  const path = secretKeyPath(config.dataDir);
  if (!existsSync(path)) {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    // Written beside, then linked into place: a reader never sees half a key, and of two
    // processes generating at once the first one's key wins for both.
    const temp = `${path}.${process.pid}.tmp`;
    writeFileSync(temp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600 });
    chmodSync(temp, 0o600);
    try {
      linkSync(temp, path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      rmSync(temp, { force: true });
    }
  }
  return parseSecretKey(readFileSync(path, 'utf8'), path);
}
