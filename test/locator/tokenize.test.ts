import { describe, expect, it } from 'vitest';
import { splitIdentifier, tokenize } from '../../src/locator/tokenize.js';

describe('locator tokens', () => {
  it('splits camelCase, PascalCase, acronyms, snake_case and digits', () => {
    expect(splitIdentifier('parseHTTPResponse')).toEqual(['parse', 'http', 'response']);
    expect(splitIdentifier('HTTPAdapter')).toEqual(['http', 'adapter']);
    expect(splitIdentifier('get_full_url')).toEqual(['get', 'full', 'url']);
    expect(splitIdentifier('base64Encode')).toEqual(['base', '64', 'encode']);
    expect(splitIdentifier('__init__')).toEqual(['init']);
  });

  it('keeps whole identifiers, lower-cased, next to their parts', () => {
    expect(tokenize('def prepare_body(self):')).toEqual(['prepare_body', 'prepare', 'body']);
    expect(tokenize('new SessionRedirectMixin()')).toEqual(['sessionredirectmixin', 'session', 'redirect', 'mixin']);
  });

  it('drops stop words and one-letter words', () => {
    expect(tokenize('The value of x is not the Default')).toEqual(['value', 'default']);
  });

  it('gives the same tokens with a memo shared across texts as without one', () => {
    const texts = [
      'class HTTPAdapter(BaseAdapter):\n    def send(self, request, **kwargs): return self.get_full_url(x2)',
      'send HTTPAdapter get_full_url __init__ The value 42 parseHTTPResponse2_v',
      'HTTPAdapter',
    ];
    const memo = new Map<string, readonly string[]>();
    for (const text of texts) expect(tokenize(text, memo)).toEqual(tokenize(text));
    expect(memo.get('HTTPAdapter')).toEqual(['httpadapter', 'http', 'adapter']);
    expect(memo.get('value')).toEqual(['value']);
  });
});
