import { AppError } from '../errors.js';

/**
 * Times the service takes in: years 0001 to 9999, in UTC. PostgreSQL's timestamptz reaches
 * further (4713 BC to 294276 AD), but it reads no year 0 and none of the signed six-digit years
 * JavaScript writes outside these (`+275760-09-13T00:00:00.000Z`, `-000001-…`): such a time
 * fails its query ("date/time field value out of range"), a 500. The service never writes a
 * time outside these years itself, so a time from a request or a cursor is checked against
 * them before any query sees it (the HTTP validator for every `date-time` field,
 * src/http/date-time-format.ts; the task list for its filters and cursors).
 */
export const TIME_RANGE = 'years 0001 to 9999';

const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** Whether `d` is a time in TIME_RANGE (an invalid Date is not). UTC decides: 0001-01-01T00:00+01:00 is year 0. */
export function inTimeRange(d: Date): boolean {
  const t = d.getTime();
  return t >= EARLIEST && t <= LATEST;
}

/** The time `value` names, for a query: bad_request naming `name` when it is none, or out of range. */
export function timeParameter(name: string, value: string): Date {
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new AppError('bad_request', `${name}: not a date-time`);
  if (!inTimeRange(d)) throw new AppError('bad_request', `${name}: out of range (${TIME_RANGE})`);
  return d;
}
