import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { configOutcomes } from './env-cases.js';

// Issue 29, point 4: the parser moved to zod with every message kept. messages.expected.txt was
// written by the hand-written parser (`npx tsx test/config/env-cases.ts`); a change to a message
// is a change to this file, on purpose.
describe("the configuration's messages", () => {
  it('are word for word those written before the parser was rewritten, in the same order', () => {
    const expected = readFileSync(new URL('./messages.expected.txt', import.meta.url), 'utf8')
      .trimEnd()
      .split('\n');
    expect(configOutcomes()).toEqual(expected);
  });
});
