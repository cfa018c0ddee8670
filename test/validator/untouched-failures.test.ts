import { afterAll, describe, expect, it } from 'vitest';
import { titledCalls } from '../../src/locator/treesitter.js';
import { changeTests } from '../../src/validator/reproduction.js';
import { namePath, untouchedFailures } from '../../src/validator/untouched-failures.js';
import { type Files, fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

// Which failing tests of a change's test files the change left alone (src/validator/untouched-failures.ts),
// on real git checkouts; the whole validator's use of it is in reproduction.test.ts.

const CARD_TESTS = `const { render } = require('../src/card.js');

describe('Test card', () => {
  it('should render translations', () => {
    expect(render({ locale: 'cn' })).toMatchInlineSnapshot(\`"累计提交数 (2023):"\`);
  });

  it("should show total reviews", () => {
    const card = render({ show_total_reviews: true });
    expect(card).toContain('reviews');
  });
});
`;
const STALE = 'Test card › should render translations';
const REVIEWS = 'Test card › should show total reviews';

describe('untouchedFailures', () => {
  afterAll(() => removeFixtureRepos());

  const judge = async (base: Files, change: Files, ids: string[]) => {
    const repo = fixtureRepo(base, change);
    const tests = await changeTests({ dir: repo.dir }, repo.base);
    const details = new Map(ids.map((id) => [id, { file: 'tests/card.test.js' }]));
    return untouchedFailures({ dir: repo.dir }, repo.base, tests, ids, details);
  };

  it('jest ids: a failing test the change did not touch is named; the one it edited is not', async () => {
    const edited = CARD_TESTS.replace('{ show_total_reviews: true }', '{ show: ["reviews"] }');
    expect(
      await judge({ 'tests/card.test.js': CARD_TESTS }, { 'tests/card.test.js': edited }, [STALE, REVIEWS]),
    ).toEqual([STALE]);
  });

  it('nothing is left alone in a new file, beside a changed helper, or with a touched line outside the tests', async () => {
    const edited = CARD_TESTS.replace('{ show_total_reviews: true }', '{ show: ["reviews"] }');
    // a new test file: every test in it is the change's
    expect(await judge({ 'src/card.js': '' }, { 'tests/card.test.js': edited }, [STALE])).toEqual([]);
    // a fixture the tests read changed too: it may be why any of them fails
    const withHelper = { 'tests/card.test.js': edited, 'tests/fixtures/user.json': '{}' };
    expect(await judge({ 'tests/card.test.js': CARD_TESTS }, withHelper, [STALE])).toEqual([]);
    // an import the change added runs before every test
    const imported = edited.replace("require('../src/card.js');", "require('../src/card.js');\nrequire('./setup');");
    expect(await judge({ 'tests/card.test.js': CARD_TESTS }, { 'tests/card.test.js': imported }, [STALE])).toEqual([]);
  });

  it('a title is matched with its groups; under other groups, or found twice, it is not left alone', async () => {
    const twice = CARD_TESTS.replace(
      "describe('Test card', () => {",
      "describe('Test card', () => {\n  describe('Test card', () => {});",
    );
    const edited = twice.replace('{ show_total_reviews: true }', '{ show: ["reviews"] }');
    expect(await judge({ 'tests/card.test.js': twice }, { 'tests/card.test.js': edited }, [STALE])).toEqual([STALE]);
    const other = 'Other group › should render translations';
    expect(await judge({ 'tests/card.test.js': twice }, { 'tests/card.test.js': edited }, [other])).toEqual([]);
    const dup = CARD_TESTS.replace(
      '  it("should show',
      "  it('should render translations', () => {});\n\n  it(\"should show",
    );
    const dupEdited = dup.replace('{ show_total_reviews: true }', '{ show: ["reviews"] }');
    expect(await judge({ 'tests/card.test.js': dup }, { 'tests/card.test.js': dupEdited }, [STALE])).toEqual([]);
  });

  it('test ids as a name and its groups, for each runner', () => {
    expect(namePath('tests/t.py::TestX::test_y[a-1]', 'tests/t.py')).toEqual({ name: 'test_y', groups: ['TestX'] });
    expect(namePath('tests/t.py::test_y', 'tests/t.py')).toEqual({ name: 'test_y', groups: [] });
    expect(namePath('src/a.test.ts > group > does it', 'src/a.test.ts')).toEqual({
      name: 'does it',
      groups: ['group'],
    });
    expect(namePath('group › inner › does it', 'a.test.js')).toEqual({ name: 'does it', groups: ['group', 'inner'] });
  });

  it('titled calls: string and plain template titles, a template with substitutions is none', async () => {
    const substitution = ['$', '{y}'].join('');
    const source = `describe(\`plain\`, () => {\n  it.concurrent('a \\'quoted\\' one', () => {});\n  test(\`x ${substitution}\`, () => {});\n});\n`;
    expect(await titledCalls('a.test.js', source)).toEqual([
      { callee: 'describe', title: 'plain', startLine: 1, endLine: 4 },
      { callee: 'it', title: "a 'quoted' one", startLine: 2, endLine: 2 },
    ]);
    expect(await titledCalls('a.py', 'x = 1\n')).toBeNull();
  });
});
