import { fullFormats } from 'ajv-formats/dist/formats.js';
import { TIME_RANGE, inTimeRange } from '../db/time-range.js';

// ajv-formats' own RFC 3339 check (full mode: real months and days, an offset required).
const rfc3339 = (fullFormats['date-time'] as { validate: (text: string) => boolean }).validate;

/**
 * The `date-time` format of every request schema: RFC 3339, as ajv-formats reads it, and a time
 * the service can hold (src/db/time-range.ts). RFC 3339 alone lets through year 0000, which
 * PostgreSQL refuses, and offsets that carry 0001-01-01 or 9999-12-31 out of range in UTC; and
 * a few texts it allows (a leap second, an offset of hours only) JavaScript cannot read.
 * So no field declared a date-time can make a query fail, whatever route declares it.
 */
export const usableDateTime = (text: string) => rfc3339(text) && inTimeRange(new Date(text));

/**
 * What to say of a date-time field's value the format refused, when "must match format" would
 * mislead: a well-formed time outside the range. Undefined otherwise.
 */
export function dateTimeProblem(text: string): string | undefined {
  const d = new Date(text);
  return rfc3339(text) && !Number.isNaN(d.getTime()) && !inTimeRange(d) ? `out of range (${TIME_RANGE})` : undefined;
}
