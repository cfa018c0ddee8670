import { extname } from 'node:path';
import { listCandidateFiles, repoFiles } from '../../locator/files.js';
import { detectTestRecipe } from '../../environments/detect.js';
import { type ConfinedDir, shownAsLink } from '../../checkout/confined-fs.js';

export interface RepoOverview {
  /** The first lines of the README, if there is one. */
  readme: string;
  /** Directories with their file counts, two levels deep, then the top-level files. */
  tree: string;
  /** Languages by file count, most first. */
  languages: { language: string; files: number }[];
  /** The command the validator would run, if it found one. */
  testCommand: string | null;
  files: number;
}

const LANGUAGES: Record<string, string> = {
  '.py': 'Python',
  '.js': 'JavaScript',
  '.jsx': 'JavaScript',
  '.mjs': 'JavaScript',
  '.cjs': 'JavaScript',
  '.ts': 'TypeScript',
  '.tsx': 'TypeScript',
  '.go': 'Go',
  '.rs': 'Rust',
  '.java': 'Java',
  '.kt': 'Kotlin',
  '.rb': 'Ruby',
  '.php': 'PHP',
  '.cs': 'C#',
  '.c': 'C',
  '.h': 'C',
  '.cpp': 'C++',
  '.cc': 'C++',
  '.hpp': 'C++',
  '.swift': 'Swift',
  '.scala': 'Scala',
  '.html': 'HTML',
  '.css': 'CSS',
  '.scss': 'CSS',
  '.sh': 'Shell',
};

const README_LINES = 60;
const README_CHARS = 4000;
const TREE_ENTRIES = 80;

/**
 * The README's head. Read through the confined file module: a README that is a symlink out of
 * the checkout (to the data dir's key, /etc/passwd, /proc/self/environ) is shown as the link.
 */
function readme(repo: ConfinedDir): string {
  const name = repo.list('').find((e) => e.type !== 'dir' && /^readme(\.(md|rst|txt|adoc))?$/i.test(e.name))?.name;
  if (!name) return '';
  const got = repo.read(name, { firstBytes: README_CHARS * 4 });
  if (!got.ok) return got.info.kind === 'too-large' ? '' : `${name}: ${shownAsLink(got.info) ?? 'not a regular file'}`;
  const text = got.bytes.toString('utf8').split('\n').slice(0, README_LINES).join('\n');
  return text.length > README_CHARS ? `${text.slice(0, README_CHARS)}\n…` : text;
}

/** What the planner is shown of a repository it has never seen: a page, not the whole tree. */
export function repoOverview(dir: string): RepoOverview {
  const paths = listCandidateFiles(dir);
  const dirs = new Map<string, number>();
  const top: string[] = [];
  const langs = new Map<string, number>();
  for (const p of paths) {
    const parts = p.split('/');
    if (parts.length === 1) top.push(p);
    else {
      const key = parts.length > 2 ? `${parts[0]}/${parts[1]}/` : `${parts[0]}/`;
      dirs.set(key, (dirs.get(key) ?? 0) + 1);
    }
    const lang = LANGUAGES[extname(p).toLowerCase()];
    if (lang) langs.set(lang, (langs.get(lang) ?? 0) + 1);
  }
  const dirLines = [...dirs.entries()]
    .sort((a, b) => a[0].localeCompare(b[0]))
    .map(([d, n]) => `${d} (${n} file${n === 1 ? '' : 's'})`);
  const lines = [...dirLines, ...top.sort()];
  const tree =
    lines.length > TREE_ENTRIES
      ? [...lines.slice(0, TREE_ENTRIES), `… and ${lines.length - TREE_ENTRIES} more entries`].join('\n')
      : lines.join('\n');
  let testCommand: string | null = null;
  try {
    testCommand = detectTestRecipe(dir)?.command ?? null;
  } catch {
    testCommand = null;
  }
  return {
    readme: readme(repoFiles(dir)),
    tree,
    languages: [...langs.entries()].sort((a, b) => b[1] - a[1]).map(([language, files]) => ({ language, files })),
    testCommand,
    files: paths.length,
  };
}
