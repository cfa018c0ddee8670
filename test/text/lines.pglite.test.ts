import { describe, expect, it } from 'vitest';
import { headLines } from '../../src/text/lines.js';

describe('headLines', () => {
  it('keeps whole lines only, as many as fit', () => {
    const text = 'alpha\nbeta\ngamma\ndelta';
    expect(headLines(text, 100)).toEqual({ text, cut: false, lines: 4 });
    // 'alpha\nbeta' is 10 characters; 'gamma' would need 6 more.
    expect(headLines(text, 15)).toEqual({ text: 'alpha\nbeta', cut: true, lines: 2 });
    expect(headLines(text, 10)).toEqual({ text: 'alpha\nbeta', cut: true, lines: 2 });
    expect(headLines(text, 4)).toEqual({ text: '', cut: true, lines: 0 });
  });
});
