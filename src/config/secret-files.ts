import { readFileSync } from 'node:fs';
import type { Env } from './env.js';
import { ConfigError } from './error.js';

/**
 * The settings that carry a secret, each of which may instead be read from a file named by
 * `<NAME>_FILE` (as the official PostgreSQL image and others read theirs): a container
 * runtime's or an orchestrator's secrets are files, and a file keeps the value out of
 * `docker inspect`, the process table and the environment a child inherits.
 * EMEND_SCM_HOSTS has had its own EMEND_SCM_HOSTS_FILE (a JSON file) since before; it is read
 * there, the same way.
 */
export const SECRET_VARIABLES = [
  'EMEND_SECRET_KEY',
  'DATABASE_URL',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'GOOGLE_GENERATIVE_AI_API_KEY',
  'EMEND_SCM_OAUTH_CLIENT_SECRET',
  'EMEND_OIDC_CLIENT_SECRET',
] as const;

/**
 * The environment with each secret's `<NAME>_FILE` read into `<NAME>` (trailing line breaks
 * trimmed). Both given is a ConfigError naming both; an unreadable file one naming the variable
 * and the path with the system's error code. No message ever carries a value. A `_FILE` of any
 * other name is left alone: the environment is shared with other programs (a compose file's
 * POSTGRES_PASSWORD_FILE), and only these names are secrets of ours.
 */
export function withSecretFiles(env: Env, read: (path: string) => string = (p) => readFileSync(p, 'utf8')): Env {
  let out: Env | undefined;
  for (const name of SECRET_VARIABLES) {
    const fileVariable = `${name}_FILE`;
    const path = env[fileVariable]?.trim();
    if (!path) continue;
    if (env[name] !== undefined && env[name].trim() !== '')
      throw new ConfigError(name, `set this or ${fileVariable}, not both`);
    let content: string;
    try {
      content = read(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new ConfigError(fileVariable, `cannot read ${path}: ${code}`);
    }
    out ??= { ...env };
    out[name] = content.replace(/[\r\n]+$/, '');
  }
  return out ?? env;
}
