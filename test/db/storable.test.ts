import { describe, expect, it } from 'vitest';
import { storableJson, storableText } from '../../src/db/storable.js';

describe('storable values', () => {
  it('replaces NUL and unpaired surrogates with U+FFFD and keeps everything else', () => {
    expect(storableText('a\u0000b')).toBe('a\ufffdb');
    expect(storableText('x\ud800y\udc00z')).toBe('x\ufffdy\ufffdz');
    expect(storableText('pair \ud83d\ude00 ok')).toBe('pair \ud83d\ude00 ok');
  });

  it('reaches every string of a JSON value, keys included, and leaves escaped look-alikes alone', () => {
    const value = {
      'k\u0000': ['ok', { deep: 'a\u0000\u0000b' }],
      text: 'the text \\u0000 stays',
      lone: '\udfff',
      emoji: '\ud83d\ude00',
    };
    expect(storableJson(value)).toEqual({
      'k\ufffd': ['ok', { deep: 'a\ufffd\ufffdb' }],
      text: 'the text \\u0000 stays',
      lone: '\ufffd',
      emoji: '\ud83d\ude00',
    });
    const clean = { a: ['b', 1, null, true] };
    expect(storableJson(clean)).toBe(clean);
  });
});
