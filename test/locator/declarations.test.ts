import { afterAll, describe, expect, it } from 'vitest';
import { locate } from '../../src/locator/index.js';
import { promptAboutTypes } from '../../src/locator/rank.js';
import { fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

// A JavaScript package with hand-written TypeScript declarations: each module has a `.d.ts` naming
// the same functions, with documentation comments that match a report's words as well as the code.
const PACKAGE = {
  'package.json': '{ "name": "clock", "main": "src/index.js", "types": "types/index.d.ts" }',
  'src/index.js': 'export default function clock(value) {\n  return { value }\n}\n',
  'src/plugin/duration/index.js': [
    "import { MILLISECONDS_A_SECOND } from '../../constant'",
    '',
    'export default (option, Clock) => {',
    '  Clock.prototype.toISOString = function () {',
    '    const seconds = this.$ms / MILLISECONDS_A_SECOND',
    "    return 'PT' + seconds + 'S'",
    '  }',
    '}',
    '',
  ].join('\n'),
  'src/constant.js': 'export const MILLISECONDS_A_SECOND = 1000\n',
  'types/plugin/duration.d.ts': [
    '/** A duration: a length of time in years, months, days, hours, minutes and seconds. */',
    'export interface Duration {',
    '  /** The duration as an ISO 8601 string: `PT1S` for one second; a negative duration has a leading minus. */',
    '  toISOString(): string',
    '  /** The duration in seconds, negative for a negative duration. */',
    '  asSeconds(): number',
    '}',
    '',
  ].join('\n'),
};

describe('type declaration files', { timeout: 60_000 }, () => {
  afterAll(() => removeFixtureRepos());

  it('ranks a module above its `.d.ts` for a report of a behaviour: the declaration is demoted', async () => {
    const repo = fixtureRepo(PACKAGE);
    const out = await locate(
      repo.dir,
      'Duration toISOString of a negative duration is wrong\n\n' +
        "`clock.duration(-1, 'seconds').toISOString()` returns `PT-1S`, the ISO string of a negative duration " +
        'should be `-PT1S`.',
      { top: 4 },
    );
    const paths = out.files.map((f) => f.path);
    expect(paths[0]).toBe('src/plugin/duration/index.js');
    expect(paths.indexOf('types/plugin/duration.d.ts')).toBeGreaterThan(0);
    expect(out.files.find((f) => f.path === 'types/plugin/duration.d.ts')?.reasons).toContain(
      'type declarations, demoted: the prompt is not about types',
    );
  });

  it('does not demote it when the report is about the types themselves', async () => {
    const repo = fixtureRepo(PACKAGE);
    const out = await locate(
      repo.dir,
      'The typings of Duration toISOString are wrong\n\n' +
        "`clock.duration(-1, 'seconds').toISOString()` is declared to return a number in the type definitions; " +
        'it returns the ISO string of a negative duration.',
      { top: 4 },
    );
    expect(out.files[0]?.path).toBe('types/plugin/duration.d.ts');
  });

  it('tells a report about types from one that merely mentions TypeScript', () => {
    expect(promptAboutTypes('Missing typings for the utc plugin')).toBe(true);
    expect(promptAboutTypes('The type definition of format() is wrong')).toBe(true);
    expect(promptAboutTypes('types/index.d.ts declares isValid as a property')).toBe(true);
    expect(promptAboutTypes('Using dayjs with TypeScript 5, format() gives a wrong day')).toBe(false);
    expect(promptAboutTypes('Wrong result for some input types')).toBe(false);
  });
});
