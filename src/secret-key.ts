import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Config, parseSecretKey } from './config.js';

/**
 * The key that encrypts provider keys and code-host tokens. Without EMEND_SECRET_KEY the
 * embedded default generates one into the data dir (mode 0600) and reuses it on every start.
 */
export function resolveSecretKey(config: Config): Buffer {
  if (config.secretKey) return config.secretKey;
  const path = join(config.dataDir, 'secret.key');
  if (existsSync(path)) return parseSecretKey(readFileSync(path, 'utf8'), path);
  mkdirSync(config.dataDir, { recursive: true });
  writeFileSync(path, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return parseSecretKey(readFileSync(path, 'utf8'), path);
}
