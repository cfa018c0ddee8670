import { afterAll, describe, expect, it } from 'vitest';
import { locate } from '../../src/locator/index.js';
import { queryTerms, queryTokens } from '../../src/locator/rank.js';
import { type Files, fixtureRepo, removeFixtureRepos } from '../support/fixture-repos.js';

// A small command-line tool: a loader, a reporter whose vocabulary is that of a test run's log, a
// configuration module reading kebab-case options, and a module of numeric tables.
const TOOL: Files = {
  'tool/__init__.py': '',
  'tool/loader.py':
    'import sys\n\n\ndef load_plugins(paths):\n    """Load each plugin module once from the plugin paths."""\n' +
    '    loaded = {}\n    for path in paths:\n        name = plugin_name(path)\n        if name not in loaded:\n' +
    '            loaded[name] = __import__(name)\n    return loaded\n\n\ndef plugin_name(path):\n' +
    '    return path.rsplit("/", 1)[-1].removesuffix(".py")\n',
  'tool/report.py':
    'class Reporter:\n    """Writes the session log: platform, rootdir, collected items, passed and failed counts."""\n\n' +
    '    def session_starts(self, platform, rootdir):\n        self.write(f"platform {platform} rootdir {rootdir}")\n\n' +
    '    def collected(self, items, deselected, selected):\n        self.write(f"collected {items} items")\n\n' +
    '    def summary(self, passed, failed, errors):\n        self.write(f"{failed} failed, {passed} passed")\n',
  'tool/config.py':
    'class Options:\n    def __init__(self, parsed):\n        self.max_line_length = parsed.get("max_line_length", 100)\n' +
    '        self.color = parsed.get("color", True)\n',
  'tool/text.py':
    'def wrap(text, width):\n    """Wrap text: the line length at most the maximum width."""\n    lines, line = [], ""\n' +
    '    for word in text.split():\n        if len(line) + len(word) > width:\n            lines.append(line)\n' +
    '            line = ""\n        line += word + " "\n    return lines + [line]\n\n\ndef max_length(lines):\n' +
    '    return max(len(line) for line in lines)\n',
  'tool/tables.py':
    'WIDTHS = [0, 1, 2, 3, 5, 8, 10, 12, 14, 16, 20, 24, 32, 64]\nSTEPS = {1: 2, 2: 4, 3: 8, 4: 16, 5: 32, 6: 64}\n' +
    'LIMITS = (0, 1, 10, 100, 1000)\n',
};

describe('the locator query', { timeout: 60_000 }, () => {
  afterAll(() => removeFixtureRepos());

  it('drops numbers, keeps identifiers holding digits', () => {
    expect(queryTokens('pytest 6.0.0rc0 on python3.9, line 14 of base64.py: F0010')).toEqual([
      'pytest',
      'rc0',
      'rc',
      'python3',
      'python',
      'line',
      'base64',
      'base',
      'py',
      'f0010',
    ]);
  });

  it('adds the snake_case and joined forms of a kebab-case word', () => {
    const tokens = queryTokens('run with --import-mode=importlib and `ignore-paths`');
    expect(tokens).toEqual(expect.arrayContaining(['import_mode', 'importmode', 'ignore_paths', 'ignorepaths']));
    expect(tokens).toEqual(expect.arrayContaining(['mode', 'importlib', 'ignore', 'paths']));
    expect(queryTerms('The --max-line-length option is ignored').get('max_line_length')).toBe(2);
  });

  it("ranks the file the title's terms match first when a long log matches another file's words", async () => {
    const repo = fixtureRepo(TOOL);
    const log = [
      '============ session starts ============',
      'platform linux -- Python 3.11.1, rootdir /home/u/proj',
      'collected 421 items / 180 deselected / 241 selected',
      '============ 3 failed, 238 passed, 2 errors ============',
      'platform darwin, rootdir /Users/u/proj: collected items, failed, passed, errors in the session',
    ];
    const prompt = `Plugin module loaded twice from two plugin paths\n\nIn my project:\n\n\`\`\`\n${log.join('\n')}\n\`\`\`\n`;
    const out = await locate(repo.dir, prompt);
    expect(out.files[0]?.path).toBe('tool/loader.py');
    expect(out.files[0]?.reasons.join('\n')).toContain("the title's terms match");
    expect(out.files.map((f) => f.path)).toContain('tool/report.py');
  });

  it('matches a kebab-case option to the code that reads it in snake_case', async () => {
    const repo = fixtureRepo(TOOL);
    const out = await locate(
      repo.dir,
      'The max-line-length option has no effect\n\nWith `max-line-length = 120` in the configuration file, ' +
        'lines longer than 100 characters are still wrapped.',
    );
    expect(out.files[0]?.path).toBe('tool/config.py');
    expect(out.files[0]?.reasons.join('\n')).toContain('max_line_length');
  });

  it('matches no file by the numbers of versions, counts and line numbers', async () => {
    const repo = fixtureRepo(TOOL);
    const out = await locate(
      repo.dir,
      'Plugins 2.3.1 on Python 3.10: 12 of 16 plugins load, 4 fail (line 14, 20, 24, 32, 64 of the log)',
      { top: 20 },
    );
    expect(out.files[0]?.path).toBe('tool/loader.py');
    expect(out.files.map((f) => f.path)).not.toContain('tool/tables.py');
  });
});
