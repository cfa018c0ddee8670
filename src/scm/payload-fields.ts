import type { z } from 'zod';
import type { RepoPath } from './code-host.js';
import type { ReadEvent } from './host-events.js';

/**
 * What the hosts' webhook readers (`readEvent`, src/scm/<host>/events.ts) share: checking a
 * payload against the fields emend needs and, when one is missing or of another type, a sentence
 * naming it, so a delivery emend cannot read is recorded with the reason rather than thrown on.
 */

/** A payload read against a schema: its fields, or why not. */
export type Fields<T> = { fields: T } | { ignored: string };

/** `issue.labels[0].name`: where in the payload a field is, as people write it. */
function fieldName(path: readonly PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

/** The payload's value at `path`, or undefined where the path leaves the payload. */
function valueAt(payload: unknown, path: readonly PropertyKey[]): unknown {
  let value = payload;
  for (const key of path) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = Reflect.get(value, key);
  }
  return value;
}

/** How a value reads in a sentence: its JSON type. */
function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'number') return Number.isInteger(value) ? 'a number' : 'a fraction';
  return `a ${typeof value}`;
}

/** The first thing wrong with the payload, in words naming the field. */
function describe(payload: unknown, issue: z.core.$ZodIssue): string {
  const name = fieldName(issue.path);
  const value = valueAt(payload, issue.path);
  if (value === undefined) return `the payload has no ${name}`;
  if (issue.code === 'invalid_type') {
    const expected =
      issue.expected === 'int' ? 'a whole number' : `${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
    return `the payload's ${name} is ${kindOf(value)}, not ${expected}`;
  }
  return `the payload's ${name} is not what the host documents (${issue.message})`;
}

/**
 * `payload` checked against `schema` (zod, which keeps only the fields it names): the fields, or
 * a sentence naming the first one missing or of the wrong type. Never throws.
 */
export function readFields<T>(schema: z.ZodType<T>, payload: unknown): Fields<T> {
  if (typeof payload !== 'object' || payload === null || Array.isArray(payload))
    return { ignored: `the payload is ${kindOf(payload)}, not a JSON object` };
  const read = schema.safeParse(payload);
  if (read.success) return { fields: read.data };
  const [first] = read.error.issues;
  return { ignored: first ? describe(payload, first) : 'the payload does not have the fields the host documents' };
}

/** An event word in a sentence, quoted and cut short (it comes from a request header). */
export function quoted(word: string): string {
  return JSON.stringify(word.length > 60 ? `${word.slice(0, 60)}…` : word);
}

/** Reads one kind of delivery; `word` is the event word it came under. */
export type EventReader = (payload: unknown, word: string) => ReadEvent;

/**
 * A host's `readEvent`: the reader its table has for the delivery's event word, or a sentence
 * saying the host's word is not one emend reads. Only the table's own words count (never one
 * inherited from Object.prototype: the word comes from a request header).
 */
export function eventReader(host: string, readers: Readonly<Record<string, EventReader>>) {
  return (event: string, payload: unknown): ReadEvent => {
    const read = Object.hasOwn(readers, event) ? readers[event] : undefined;
    return read ? read(payload, event) : { ignored: `${host}'s ${quoted(event)} event is not one emend reads` };
  };
}

/** Two repositories are one: hosts compare owner and name without regard to case. */
export function sameRepo(a: RepoPath, b: RepoPath): boolean {
  return a.owner.toLowerCase() === b.owner.toLowerCase() && a.name.toLowerCase() === b.name.toLowerCase();
}
