import { type TSchema, Type } from '@sinclair/typebox';

// The pieces every resource's schemas are built from. Each resource's own schemas (the named
// components of the document) are in its route file, beside the handlers and the presenter
// that produce them; src/http/components.ts lists them for registration.

export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
export const Timestamp = Type.String({ format: 'date-time' });
/** A Timestamp field's value: the date in ISO 8601, or null. */
export const isoOrNull = (d: Date | null | undefined) => (d ? d.toISOString() : null);

/**
 * A string from a closed vocabulary, written as one `enum` in the document (not an anyOf of
 * one-value consts, which generated clients type as a plain string). Every closed set of strings
 * in a route schema goes through this helper. Validation is the same: Ajv checks `enum`.
 */
export const StringEnum = <T extends string>(
  values: readonly T[],
  options: { description?: string; default?: NoInfer<T>; examples?: NoInfer<T>[] } = {},
) => Type.Unsafe<T>({ type: 'string', enum: [...values], ...options });

/** A URL field: `format: uri` (RFC 3986, as Ajv checks it on the way in). */
export const Url = (options: { description?: string; examples?: string[]; maxLength?: number } = {}) =>
  Type.String({ format: 'uri', ...options });
/** An id: a UUID (v7, time-sortable). */
export const Uuid = (options: { description?: string } = {}) => Type.String({ format: 'uuid', ...options });
/** A count or size that is never negative. */
export const Count = (options: { description?: string; maximum?: number } = {}) =>
  Type.Integer({ minimum: 0, ...options });
/** An amount in US dollars, never negative. */
export const Usd = (options: { description?: string } = {}) => Type.Number({ minimum: 0, ...options });

/** A success response's schema with its description in the document. */
export const described = <T extends TSchema>(description: string, schema: T): T => ({
  ...schema,
  description,
});

/** A code host of this server by its id (config.scmHosts; GET /v1/me `scm_hosts`). */
export const ScmHostId = (
  description = 'the id of one of the server’s code hosts (GET /v1/me lists them); default: the first',
) => Type.String({ pattern: '^[a-z0-9][a-z0-9-]{0,39}$', description });

export const IdParams = Type.Object({ id: Uuid() });
