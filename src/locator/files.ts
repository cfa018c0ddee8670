import { execFileSync } from 'node:child_process';
import { extname } from 'node:path';
import { ConfinedDir } from '../checkout/confined-fs.js';

export const MAX_FILE_BYTES = 1_000_000;

const SKIP_DIRS = new Set([
  '.git',
  'node_modules',
  'vendor',
  'build',
  'dist',
  'target',
  '__pycache__',
  '.venv',
  'venv',
  '.tox',
  '.mypy_cache',
  '.pytest_cache',
  'out',
  'coverage',
]);

// Text source and docs; anything else (images, archives, lock files, data) is not a candidate.
const TEXT_EXTENSIONS = new Set(
  (
    '.py .pyi .js .jsx .mjs .cjs .ts .tsx .mts .cts .go .rs .java .kt .kts .scala .c .h .cc .cpp .cxx .hpp .hh ' +
    '.cs .rb .php .swift .m .mm .sh .bash .zsh .lua .pl .r .jl .ex .exs .erl .hs .ml .clj .dart .vue .svelte .sql ' +
    '.proto .graphql .md .rst .txt .adoc .toml .yaml .yml .json .cfg .ini .html .css .scss .xml .gradle .cmake'
  ).split(' '),
);
const TEXT_NAMES = new Set(['Makefile', 'Dockerfile', 'Rakefile', 'Gemfile', 'CMakeLists.txt', 'README', 'LICENSE']);
const SKIP_NAMES =
  /(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|go\.sum)$|\.min\.(js|css)$/;

function isCandidateName(path: string): boolean {
  if (SKIP_NAMES.test(path)) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  return TEXT_EXTENSIONS.has(extname(name).toLowerCase()) || TEXT_NAMES.has(name);
}

export function isGitRepo(dir: string): boolean {
  try {
    return (
      execFileSync('git', ['-C', dir, 'rev-parse', '--is-inside-work-tree'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim() === 'true'
    );
  } catch {
    return false;
  }
}

/**
 * The files the locator ranks, as repository-relative paths with `/`: `git ls-files` in a git
 * checkout (tracked files, vendored directories skipped all the same), else a walk that skips
 * .git, node_modules, vendor and build directories. Binaries, files over 1 MB and files that
 * are neither source nor docs are left out.
 */
export function listCandidateFiles(repoDir: string): string[] {
  const repo = repoFiles(repoDir);
  let paths: string[];
  if (isGitRepo(repoDir)) {
    const out = execFileSync('git', ['-C', repoDir, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    });
    paths = out.split('\0').filter((p) => p && !p.split('/').some((part) => SKIP_DIRS.has(part)));
  } else {
    paths = repo.walkFiles({ skipDirs: SKIP_DIRS });
  }
  const result: string[] = [];
  for (const path of [...new Set(paths)].sort()) {
    if (!isCandidateName(path)) continue;
    // Regular files inside the checkout only: a link out, a FIFO, a deleted file is no candidate.
    const head = repo.read(path, { firstBytes: 4096 });
    if (!head.ok || head.size > MAX_FILE_BYTES || head.bytes.includes(0)) continue;
    result.push(path);
  }
  return result;
}

/**
 * A checkout's files as the locator reads them: through the confined file module, so no
 * symlink leads a read out of the checkout (src/checkout/confined-fs.ts).
 */
export function repoFiles(repoDir: string): ConfinedDir {
  return new ConfinedDir(repoDir, { exclude: ['.git'] });
}
