import { join } from 'node:path';
import { repoFiles } from '../../locator/files.js';
import { locate } from '../../locator/index.js';
import { type ConfinedDir, shownAsLink } from '../../checkout/confined-fs.js';
import { fenced } from '../prompt-parts.js';

/** How many ranked paths the planner is shown: enough to name the files, short beside the tree. */
export const PLANNER_RANKED = 15;

/**
 * The deterministic retrieval, run by the planner before it plans (the spec's "the locator runs
 * before the planner"): the same index, cached per commit where the locator step caches it, so
 * the locator step that follows loads it instead of building it again.
 */
export async function rankedPaths(dir: string, request: string, dataDir: string): Promise<string> {
  const located = await locate(dir, request, { top: PLANNER_RANKED, cacheDir: join(dataDir, 'locator-cache') });
  if (located.files.length === 0) return 'Files the search ranks highest for the request: none matched';
  const lines = located.files.map((f, i) => `${i + 1}. ${f.path} (${f.reasons.slice(0, 3).join('; ') || 'text'})`);
  return `Files the search ranks highest for the request, best first, with why:\n${lines.join('\n')}`;
}

/** Files whose whole text states conventions, in the order they are shown. */
const WHOLE_FILES = [
  'AGENTS.md',
  'CLAUDE.md',
  'CONTRIBUTING.md',
  'CONTRIBUTING.rst',
  'CONTRIBUTING',
  '.github/CONTRIBUTING.md',
  'docs/CONTRIBUTING.md',
  '.editorconfig',
  '.eslintrc',
  '.eslintrc.json',
  '.eslintrc.js',
  '.eslintrc.cjs',
  '.eslintrc.yml',
  '.eslintrc.yaml',
  'eslint.config.js',
  'eslint.config.mjs',
  'eslint.config.cjs',
  'eslint.config.ts',
  'biome.json',
  'biome.jsonc',
  '.prettierrc',
  '.prettierrc.json',
  '.prettierrc.yaml',
  '.prettierrc.yml',
  'ruff.toml',
  '.ruff.toml',
  '.flake8',
  '.rubocop.yml',
  'rustfmt.toml',
  '.rustfmt.toml',
  '.golangci.yml',
  '.golangci.yaml',
];

/** Files of which only some sections are about style: [flake8] in setup.cfg, [tool.ruff…] in pyproject.toml. */
const SECTIONED: { file: string; section: RegExp }[] = [
  { file: 'pyproject.toml', section: /^tool\.(ruff|black|isort|flake8|pylint|mypy)(\.|$)/ },
  { file: 'setup.cfg', section: /^(flake8|pycodestyle|isort|mypy)$/ },
  { file: 'tox.ini', section: /^flake8$/ },
];

const FILE_LINES = 80;
const FILE_CHARS = 2_500;
const TOTAL_CHARS = 9_000;

/** The head of `text`, cut at a line boundary, saying how much was left out. */
function headLines(text: string, maxLines = FILE_LINES, maxChars = FILE_CHARS): string {
  const lines = text.replace(/\s+$/, '').split('\n');
  const kept: string[] = [];
  let size = 0;
  for (const line of lines) {
    if (kept.length >= maxLines || size + line.length + 1 > maxChars) break;
    kept.push(line);
    size += line.length + 1;
  }
  const left = lines.length - kept.length;
  return left > 0 ? `${kept.join('\n')}\n… (${left} more line${left === 1 ? '' : 's'})` : kept.join('\n');
}

/** The sections of an INI or TOML file whose header matches, as they are written. */
function sections(text: string, wanted: RegExp): string {
  const out: string[] = [];
  let keep = false;
  for (const line of text.split('\n')) {
    const header = /^\s*\[+\s*([^\]]+?)\s*\]+\s*$/.exec(line);
    if (header) keep = wanted.test(header[1]!);
    if (keep) out.push(line);
  }
  return out.join('\n').trim();
}

/**
 * One conventions file as the planner and the fixer see it: read through the confined file module,
 * so a link out of the checkout is shown as the link and never followed; undefined when it is not
 * there. Only its head is read (a hostile repository may hold a huge file), then clipped at a line.
 */
export function readConvention(repo: ConfinedDir, path: string, section?: RegExp): string | undefined {
  const got = repo.read(path, { firstBytes: section ? 256 * 1024 : FILE_CHARS * 4 });
  if (!got.ok) {
    const link = shownAsLink(got.info);
    // A link's target is the repository's text too: one line, so it cannot start a section of its own.
    return link ? `${path}: ${JSON.stringify(link).slice(1, -1)} (not followed)` : undefined;
  }
  const text = got.bytes.toString('utf8');
  const body = section ? sections(text, section) : text;
  if (!body.trim()) return undefined;
  return `${path}:\n${fenced(headLines(body))}`;
}

/**
 * The repository's conventions files (agent instructions, contributing guides, editor and lint
 * settings), each clipped at a line boundary, within a total (smaller when the model's window is);
 * '' when it has none.
 */
export function conventions(dir: string, maxChars = TOTAL_CHARS): string {
  const total = Math.min(maxChars, TOTAL_CHARS);
  const repo = repoFiles(dir);
  const found = [
    ...WHOLE_FILES.map((f) => readConvention(repo, f)),
    ...SECTIONED.map((s) => readConvention(repo, s.file, s.section)),
  ].filter((s): s is string => s !== undefined);
  const shown: string[] = [];
  let size = 0;
  for (const part of found) {
    if (size + part.length > total) {
      shown.push(`… (${found.length - shown.length} more conventions file(s) left out for space)`);
      break;
    }
    shown.push(part);
    size += part.length;
  }
  return shown.join('\n');
}

/**
 * The plan's likely files that exist in the checkout, or that the plan says it creates; the others
 * are dropped (a model that never read the tree invents plausible paths), and the caller logs them.
 */
export function existingOrNew(dir: string, likely: string[], created: string[]): { kept: string[]; dropped: string[] } {
  const repo = repoFiles(dir);
  const isNew = new Set(created.map((p) => p.replace(/^\.\//, '')));
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const raw of likely) {
    const path = raw.replace(/^\.\//, '');
    if (repo.info(path).kind === 'file' || isNew.has(path)) kept.push(path);
    else dropped.push(raw);
  }
  return { kept, dropped };
}
