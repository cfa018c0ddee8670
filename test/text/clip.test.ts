import { describe, expect, it } from 'vitest';
import { ONE_LINE, clip } from '../../src/text/clip.js';

// Issue 14, point 5: one clip for four former copies. Each caller's output must stay byte for
// byte what it was (prompts and site-check messages quote it), so each flavour is pinned here.
describe('clip', () => {
  const long = 'abcdefghij'.repeat(3);

  it('leaves text within the limit as it is, in every flavour', () => {
    expect(clip('short\ntext', 20)).toBe('short\ntext');
    expect(clip('short\ntext', 20, { marker: '\n… (cut)' })).toBe('short\ntext');
    expect(clip('abc', 3, { marker: '…' })).toBe('abc');
  });

  it('marks a cut in a prompt with a line saying where (the steps’ prompts)', () => {
    expect(clip(long, 12)).toBe('abcdefghijab\n… (cut at 12 characters)');
  });

  it('takes a marker of the caller’s: memory quoted in prompts, an edit’s line in a message', () => {
    expect(clip(long, 12, { marker: '\n… (cut)' })).toBe('abcdefghijab\n… (cut)');
    expect(clip(long, 12, { marker: '…' })).toBe('abcdefghijab…');
  });

  it('ONE_LINE flattens whitespace and keeps the result within max, the ellipsis included (site checks)', () => {
    expect(clip('  a\n\tb   c  ', 80, ONE_LINE)).toBe('a b c');
    expect(clip(`x \n ${long}`, 10, ONE_LINE)).toBe('x abcdefg…');
    expect(clip(`x \n ${long}`, 10, ONE_LINE)).toHaveLength(10);
    // The limit applies to the flattened text: whitespace collapsed first may bring it within.
    expect(clip('a    b', 3, ONE_LINE)).toBe('a b');
  });
});
