import { describe, expect, it } from 'vitest';
import type { FileDefinition } from '../../src/locator/index.js';
import { matchingDefinitions } from '../../src/locator/match.js';

const def = (name: string, start: number): FileDefinition => [name, 'function', start, start + 5, null];

describe('matchingDefinitions', () => {
  const defs = [def('setup', 1), def('show_fixtures_per_test', 10), def('_showfixtures_main', 20), def('scope', 30)];

  it('ranks a name the request uses whole first, then by the share of its parts the request uses', () => {
    const got = matchingDefinitions(defs, 'Call _showfixtures_main to show each fixture scope', 3).map((d) => d[0]);
    expect(got).toEqual(['_showfixtures_main', 'scope', 'show_fixtures_per_test']);
  });

  it('leaves out definitions sharing no token with the request', () => {
    expect(matchingDefinitions(defs, 'unrelated words only', 5)).toEqual([]);
  });
});
