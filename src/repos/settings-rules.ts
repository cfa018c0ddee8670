import { AppError } from '../errors.js';
import { BASE_ENV } from '../sandbox/bwrap-args.js';
import { egressEnv } from '../sandbox/egress-env.js';

/** Bounds of what an account may set per repository (docs/environments.md). */
export const SETTINGS_LIMITS = {
  commandChars: 2000,
  envCount: 50,
  nameChars: 128,
  envValueChars: 4096,
  envTotalChars: 32 * 1024,
  secretCount: 20,
  secretValueBytes: 8 * 1024,
} as const;

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Names a setting may not take, because they decide how the sandbox or its egress proxy works:
 * what the sandbox always sets (PATH, HOME…), what setup's proxy sets (derived from egressEnv, so
 * a variable added there is refused here too), anything naming a proxy, the dynamic loader's
 * variables and the service's own prefix. Compared case-insensitively: tools read both cases.
 */
const RESERVED_NAMES = new Set(
  [...Object.keys(BASE_ENV), ...Object.keys(egressEnv()), 'TMPDIR', 'SHELL', 'ENV', 'BASH_ENV'].map((n) =>
    n.toUpperCase(),
  ),
);
const RESERVED_PATTERNS: Array<[RegExp, string]> = [
  [/PROXY/i, 'names a proxy'],
  [/^LD_/i, 'changes the dynamic loader'],
  [/^EMEND_/i, 'is the service’s own prefix'],
];

/** Why a variable name is refused, or undefined. */
export function reservedReason(name: string): string | undefined {
  if (RESERVED_NAMES.has(name.toUpperCase())) return 'is set by the sandbox or its egress proxy';
  for (const [pattern, why] of RESERVED_PATTERNS) if (pattern.test(name)) return why;
  return undefined;
}

const bad = (field: string, why: string) => new AppError('bad_request', `${field}: ${why}`);

/** A setup or test command: non-empty after trimming, bounded, no NUL. Returns it trimmed. */
export function checkCommand(field: string, value: string): string {
  const command = value.trim();
  if (command.length === 0) throw bad(field, 'must not be empty (use null to clear it)');
  if (command.length > SETTINGS_LIMITS.commandChars)
    throw bad(field, `at most ${SETTINGS_LIMITS.commandChars} characters`);
  if (command.includes('\0')) throw bad(field, 'must not contain the NUL character');
  return command;
}

/** A variable or secret name: the shell's pattern, bounded, not one the sandbox owns. */
export function checkName(field: string, name: string): void {
  if (!ENV_NAME.test(name))
    throw bad(field, `${JSON.stringify(clipName(name))} is not a variable name (${ENV_NAME.source})`);
  if (name.length > SETTINGS_LIMITS.nameChars) throw bad(field, `at most ${SETTINGS_LIMITS.nameChars} characters`);
  const why = reservedReason(name);
  if (why) throw bad(field, `${name} ${why}; it cannot be set per repository`);
}

const clipName = (name: string) => (name.length > 40 ? `${name.slice(0, 40)}…` : name);

/** A variable's name, the error naming `env.NAME` (or `env` when the name is not one). */
export const checkEnvName = (name: string) => checkName(ENV_NAME.test(name) ? `env.${name}` : 'env', name);

/** The variables as they will be stored: each name and value checked, the whole bounded. */
export function checkEnv(env: Record<string, string>): Record<string, string> {
  const names = Object.keys(env);
  if (names.length > SETTINGS_LIMITS.envCount) throw bad('env', `at most ${SETTINGS_LIMITS.envCount} variables`);
  let total = 0;
  for (const name of names) {
    checkEnvName(name);
    const value = env[name]!;
    if (value.includes('\0')) throw bad(`env.${name}`, 'must not contain the NUL character');
    if (value.length > SETTINGS_LIMITS.envValueChars)
      throw bad(`env.${name}`, `at most ${SETTINGS_LIMITS.envValueChars} characters`);
    total += name.length + value.length;
  }
  if (total > SETTINGS_LIMITS.envTotalChars)
    throw bad('env', `names and values together at most ${SETTINGS_LIMITS.envTotalChars} characters`);
  return env;
}

/** A secret's value: non-empty, at most 8 KB of UTF-8, no NUL. */
export function checkSecretValue(value: string): void {
  if (value.length === 0) throw bad('value', 'must not be empty');
  if (Buffer.byteLength(value, 'utf8') > SETTINGS_LIMITS.secretValueBytes)
    throw bad('value', `at most ${SETTINGS_LIMITS.secretValueBytes} bytes`);
  if (value.includes('\0')) throw bad('value', 'must not contain the NUL character');
}
