import { afterAll, describe, expect, it } from 'vitest';
import { locate } from '../../src/locator/index.js';
import { fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

// Pairs of files with the same words, the demoted one matching the report a little more: it ranks
// below the other only by its demotion.
const TEMPLATE =
  '**Describe the bug**\nA clear and concise description of what the bug is.\n\n**Expected behavior**\n' +
  'A clear and concise description of what you expected to happen.\n';
const RUNNER =
  'module.exports = (config) => config.set({\n' +
  "  browsers: ['ChromeHeadless', 'FirefoxHeadless'],\n  concurrency: 2,\n})\n";

describe('the kinds of files a report is rarely fixed in', { timeout: 60_000 }, () => {
  afterAll(() => removeFixtureRepos());

  it('demotes an issue template as documentation and as CI both: below a guide with fewer of its words', async () => {
    const repo = fixtureRepo({
      '.github/ISSUE_TEMPLATE/bug.md': `${TEMPLATE}Screenshots: a clear description of the problem.\n`,
      'docs/reporting.md': TEMPLATE,
      'src/card.js': "export const render = (card) => '<svg>' + card.title + '</svg>'\n",
    });
    const out = await locate(
      repo.dir,
      'Card title is cut\n\n**Describe the bug**\nA clear and concise description of what the bug is: the title of ' +
        'the card is cut.\n\n**Expected behavior**\nThe whole title.\n\nScreenshots: a clear description.',
      { top: 5 },
    );
    const paths = out.files.map((f) => f.path);
    expect(paths.indexOf('docs/reporting.md')).toBeLessThan(paths.indexOf('.github/ISSUE_TEMPLATE/bug.md'));
    expect(out.files.find((f) => f.path === '.github/ISSUE_TEMPLATE/bug.md')?.reasons).toContain(
      'documentation outside the library source (CI, examples, tooling), demoted',
    );
  });

  it('demotes configuration written as code (`*.conf.js`, `*.config.ts`): below source with fewer of its words', async () => {
    const repo = fixtureRepo({
      'karma.browsers.conf.js': `${RUNNER}// headless browsers only\n`,
      'src/browsers.js': RUNNER,
    });
    const out = await locate(repo.dir, 'Headless browsers: the concurrency is not set for ChromeHeadless', {
      top: 5,
    });
    expect(out.files.map((f) => f.path)).toEqual(['src/browsers.js', 'karma.browsers.conf.js']);
    expect(out.files[1]?.reasons).toContain('not library source (example, tooling, configuration or data), demoted');
  });
});
