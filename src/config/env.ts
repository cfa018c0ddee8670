import { z } from 'zod';
import { ConfigError } from './error.js';

/**
 * The one way the configuration reads the environment: each variable is a zod schema over its
 * trimmed text, and `read` turns a refusal into a ConfigError naming the variable, with the
 * schema's message. A blank value is an unset one.
 */

export type Env = Record<string, string | undefined>;

/** A schema over a variable's text. */
export type VariableSchema<T> = z.ZodType<T, string>;

/** The variable's text, trimmed; undefined when unset or blank. */
export function text(env: Env, name: string): string | undefined {
  const v = env[name];
  return v === undefined || v.trim() === '' ? undefined : v.trim();
}

/** The variable parsed by its schema; the fallback when it is unset. */
export function read<T>(env: Env, name: string, schema: VariableSchema<T>, fallback: T): T;
export function read<T>(env: Env, name: string, schema: VariableSchema<T>): T | undefined;
export function read<T>(env: Env, name: string, schema: VariableSchema<T>, fallback?: T): T | undefined {
  const raw = text(env, name);
  return raw === undefined ? fallback : parseAs(name, raw, schema);
}

/** A value parsed by a schema, a refusal naming `name` (a variable, or the file a value came from). */
export function parseAs<T>(name: string, raw: string, schema: VariableSchema<T>): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ConfigError(name, parsed.error.issues[0]?.message ?? 'not accepted');
  return parsed.data;
}

/** Stops a transform with a message (the issue `read` reports). */
export function refuse(ctx: z.RefinementCtx, message: string): typeof z.NEVER {
  ctx.addIssue({ code: 'custom', message });
  return z.NEVER;
}

const DIGITS = /^\d+$/;

/** A whole number between min and max. */
export const integer = (min: number, max: number): VariableSchema<number> =>
  z
    .string()
    .regex(DIGITS, { error: (iss) => `expected an integer, got "${iss.input}"`, abort: true })
    .refine((v) => Number(v) >= min && Number(v) <= max, {
      error: (iss) => `must be between ${min} and ${max}, got ${Number(iss.input)}`,
    })
    .transform(Number);

/** A non-negative decimal number, at most `max` when given (the message then says the range). */
export const decimal = (max?: number): VariableSchema<number> =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, { error: (iss) => `expected a non-negative number, got "${iss.input}"`, abort: true })
    .refine((v) => max === undefined || Number(v) <= max, {
      error: (iss) => `expected a number from 0 to ${max}, got "${iss.input}"`,
    })
    .transform(Number);

/** One of a few words; the message lists them (`or` between them unless `message` says otherwise). */
export const oneOf = <const T extends readonly [string, ...string[]]>(
  choices: T,
  message: (raw: unknown) => string = (raw) => `expected ${choices.join(' or ')}, got "${raw}"`,
): VariableSchema<T[number]> => z.enum(choices, { error: (iss) => message(iss.input) });

/** `on` or `off`, as a boolean. */
export const onOff: VariableSchema<boolean> = oneOf(['on', 'off']).transform((v) => v === 'on');

/** A URL as it may appear in an error message: without its password; DATABASE_URL's not at all when it does not parse. */
function shown(name: string, raw: string): string {
  if (!URL.canParse(raw)) return name === 'DATABASE_URL' ? 'a value that does not parse' : `"${raw}"`;
  const parsed = new URL(raw);
  if (!parsed.password) return `"${raw}"`;
  parsed.password = '***';
  return `"${parsed.href}"`;
}

/** A URL with one of these protocols, trailing slashes dropped. */
export const url = (name: string, protocols = ['http:', 'https:']): VariableSchema<string> =>
  z
    .string()
    .refine((v) => URL.canParse(v), {
      error: (iss) => `expected a URL, got ${shown(name, String(iss.input))}`,
      abort: true,
    })
    .refine((v) => protocols.includes(new URL(v).protocol), {
      error: (iss) => `expected a ${protocols.join(' or ')} URL, got ${shown(name, String(iss.input))}`,
    })
    .transform((v) => v.replace(/\/+$/, ''));
