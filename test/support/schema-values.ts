/**
 * Values generated from a route's JSON schema (the TypeBox schemas the routes declare): a
 * minimal valid value, and hostile variants of it field by field, so sweeps follow the
 * routes as they are instead of a hand-kept list.
 */

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  const?: unknown;
  enum?: unknown[];
  default?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  items?: JsonSchema;
  minItems?: number;
}

const FORMAT_SAMPLES: Record<string, string> = {
  uuid: '01900000-0000-7000-8000-000000000000',
  email: 'sweep@example.com',
  uri: 'https://github.com/acme/widgets',
  'date-time': '2026-01-01T00:00:00.000Z',
};

/** A minimal value the schema accepts: required fields only, the first choice of every union. */
export function sampleOf(schema: JsonSchema): unknown {
  if (schema.default !== undefined) return schema.default;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return sampleOf(schema.anyOf[0]!);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  switch (type) {
    case 'object':
      return Object.fromEntries((schema.required ?? []).map((k) => [k, sampleOf(schema.properties![k]!)]));
    case 'string': {
      if (schema.format && FORMAT_SAMPLES[schema.format]) return FORMAT_SAMPLES[schema.format];
      const length = Math.min(Math.max(schema.minLength ?? 0, 8), schema.maxLength ?? 8);
      return 'sweepxyz'.slice(0, length).padEnd(length, 'x');
    }
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => sampleOf(schema.items ?? {}));
    case 'null':
      return null;
    default:
      return {};
  }
}

/** A value of another JSON type than the schema wants. */
export function wrongTypeOf(schema: JsonSchema): unknown {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  // A nullable number (anyOf number, null) takes 12345: text is its wrong type.
  if (schema.anyOf?.some((s) => s.type === 'number' || s.type === 'integer')) return 'abc';
  if (schema.anyOf || schema.const !== undefined || schema.enum) return 12345;
  switch (type) {
    case 'string':
      return 12345;
    case 'integer':
    case 'number':
      return '7';
    case 'boolean':
      return 'true';
    case 'array':
      return { not: 'an array' };
    case 'object':
      return ['not', 'an', 'object'];
    default:
      return null;
  }
}

export interface Field {
  /** Dotted path, as error messages name it: `plan.summary`. */
  name: string;
  path: string[];
  schema: JsonSchema;
}

/** Every field of an object schema, nested objects included. */
export function fieldsOf(schema: JsonSchema, prefix: string[] = []): Field[] {
  const out: Field[] = [];
  for (const [key, child] of Object.entries(schema.properties ?? {})) {
    const path = [...prefix, key];
    out.push({ name: path.join('.'), path, schema: child });
    if (child.properties) out.push(...fieldsOf(child, path));
  }
  return out;
}

/** Whether a string field may hold free text (so a NUL in it reaches our own check). */
export const isStringField = (s: JsonSchema) => s.type === 'string' || s.items?.type === 'string';

/** Whether a field holds a date-time (alone, in an array, or as one choice of a union). */
export const isDateTimeField = (s: JsonSchema): boolean =>
  s.format === 'date-time' || s.items?.format === 'date-time' || (s.anyOf ?? []).some(isDateTimeField);

/**
 * Date-times no request may get into a query (each was a 500 somewhere): well-formed RFC 3339
 * outside years 0001..9999 in UTC (PostgreSQL has no year 0; an offset carries the ends out of
 * range), JavaScript's signed six-digit years (+275760 and -271821 are the ends of its Date), and
 * a leap second, which RFC 3339 allows and a Date cannot hold. The well-formed ones are refused
 * as out of range, the others as not date-times.
 */
export const HOSTILE_DATE_TIMES: { value: string; wellFormed: boolean }[] = [
  { value: '0000-01-01T00:00:00Z', wellFormed: true },
  { value: '0001-01-01T00:00:00+01:00', wellFormed: true },
  { value: '9999-12-31T23:59:59-05:00', wellFormed: true },
  { value: '+275760-09-13T00:00:00.000Z', wellFormed: false },
  { value: '-271821-04-20T00:00:00.000Z', wellFormed: false },
  { value: '+010000-01-01T00:00:00.000Z', wellFormed: false },
  { value: '2026-06-30T23:59:60Z', wellFormed: false },
];

/** `base` with the value at `path` replaced (objects on the way are created). */
export function withValue(base: unknown, path: string[], value: unknown): unknown {
  const root = structuredClone(base ?? {}) as Record<string, unknown>;
  let node: Record<string, unknown> = root;
  for (const key of path.slice(0, -1)) {
    if (typeof node[key] !== 'object' || node[key] === null) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]!] = value;
  return root;
}
