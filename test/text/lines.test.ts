import { describe, expect, it } from 'vitest';
import { headLines, mergeSpans } from '../../src/text/lines.js';

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

describe('mergeSpans', () => {
  it('puts spans in file order and merges those that overlap or touch, leaving its input alone', () => {
    const input = [
      { start: 30, end: 40 },
      { start: 1, end: 5 },
      { start: 6, end: 8 },
      { start: 35, end: 50 },
      { start: 60, end: 61 },
    ];
    expect(mergeSpans(input)).toEqual([
      { start: 1, end: 8 },
      { start: 30, end: 50 },
      { start: 60, end: 61 },
    ]);
    expect(input[0]).toEqual({ start: 30, end: 40 });
  });
});
