import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { conventions, existingOrNew } from '../../../src/steps/fix/grounding.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function repo(files: Record<string, string>, links: Record<string, string> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'emend-grounding-'));
  dirs.push(dir);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  for (const [path, target] of Object.entries(links)) symlinkSync(target, join(dir, path));
  return dir;
}

describe('conventions files', () => {
  it('are cut at a line boundary, long lines included, and stop within the total', () => {
    const longLines = Array.from({ length: 40 }, (_, i) => `${i}: ${'x'.repeat(96)}`).join('\n');
    const dir = repo({
      'AGENTS.md': longLines,
      'CONTRIBUTING.md': '# How to contribute\n',
      ...Object.fromEntries(
        ['.eslintrc.json', 'biome.json', '.prettierrc', 'ruff.toml', '.flake8'].map((f) => [
          f,
          `${f} ${'y'.repeat(40)}\n`.repeat(400),
        ]),
      ),
    });
    const text = conventions(dir);
    // 2,500 characters hold 24 lines of 100 characters (with their newlines); the 25th is not cut in half
    expect(text).toContain(`23: ${'x'.repeat(96)}\n… (16 more lines)\n\`\`\``);
    expect(text).not.toContain('24: x');
    expect(text).toContain('CONTRIBUTING.md:\n```\n# How to contribute\n```');
    expect(text.length).toBeLessThanOrEqual(9_000 + 200);
    expect(text).toMatch(/\n… \(\d more conventions file\(s\) left out for space\)$/);
  });

  it('take only the style sections of pyproject.toml and setup.cfg, and nothing from a repository without them', () => {
    const dir = repo({
      'pyproject.toml':
        '[project]\nname = "x"\n\n[tool.black]\nline-length = 88\n\n[tool.ruff.lint.per-file-ignores]\n' +
        '"tests/*" = ["S101"]\n\n[build-system]\nrequires = ["hatchling"]\n',
      'setup.cfg': '[metadata]\nname = x\n',
    });
    expect(conventions(dir)).toBe(
      'pyproject.toml:\n```\n[tool.black]\nline-length = 88\n\n[tool.ruff.lint.per-file-ignores]\n"tests/*" = ["S101"]\n```',
    );
    expect(conventions(repo({ 'README.md': '# x\n' }))).toBe('');
  });

  it('show a link out of the checkout as the link; a link inside is read', () => {
    const outside = repo({ 'secret.md': 'outside-marker-77\n' });
    const dir = repo({ 'docs/style.md': 'Use tabs.\n' }, { 'AGENTS.md': join(outside, 'secret.md') });
    symlinkSync('docs/style.md', join(dir, 'CLAUDE.md'));
    const text = conventions(dir);
    expect(text).toContain(`AGENTS.md: symlink -> ${join(outside, 'secret.md')} (not followed)`);
    expect(text).toContain('CLAUDE.md:\n```\nUse tabs.\n```');
    expect(text).not.toContain('outside-marker-77');
  });
});

describe('the plan’s likely files', () => {
  it('keep regular files of the checkout and the ones marked new; others, links out included, are dropped', () => {
    const outside = repo({ 'x.py': '' });
    const dir = repo({ 'pkg/a.py': '', 'pkg/b.py': '' }, { 'pkg/out.py': join(outside, 'x.py') });
    expect(
      existingOrNew(
        dir,
        ['pkg/a.py', './pkg/b.py', 'pkg/c.py', 'pkg/out.py', 'pkg', 'tests/test_c.py'],
        ['./tests/test_c.py'],
      ),
    ).toEqual({ kept: ['pkg/a.py', 'pkg/b.py', 'tests/test_c.py'], dropped: ['pkg/c.py', 'pkg/out.py', 'pkg'] });
  });
});
