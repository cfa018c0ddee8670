import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';

export const MAX_FILE_BYTES = 1_000_000;

const SKIP_DIRS = new Set(['.git', 'node_modules', 'vendor', 'build', 'dist', 'target', '__pycache__', '.venv', 'venv', '.tox', '.mypy_cache', '.pytest_cache', 'out', 'coverage']);

// Text source and docs; anything else (images, archives, lock files, data) is not a candidate.
const TEXT_EXTENSIONS = new Set(
  '.py .pyi .js .jsx .mjs .cjs .ts .tsx .mts .cts .go .rs .java .kt .kts .scala .c .h .cc .cpp .cxx .hpp .hh .cs .rb .php .swift .m .mm .sh .bash .zsh .lua .pl .r .jl .ex .exs .erl .hs .ml .clj .dart .vue .svelte .sql .proto .graphql .md .rst .txt .adoc .toml .yaml .yml .json .cfg .ini .html .css .scss .xml .gradle .cmake'.split(
    ' ',
  ),
);
const TEXT_NAMES = new Set(['Makefile', 'Dockerfile', 'Rakefile', 'Gemfile', 'CMakeLists.txt', 'README', 'LICENSE']);
const SKIP_NAMES = /(^|\/)(package-lock\.json|yarn\.lock|pnpm-lock\.yaml|Cargo\.lock|poetry\.lock|go\.sum)$|\.min\.(js|css)$/;

function isCandidateName(path: string): boolean {
  if (SKIP_NAMES.test(path)) return false;
  const name = path.slice(path.lastIndexOf('/') + 1);
  return TEXT_EXTENSIONS.has(extname(name).toLowerCase()) || TEXT_NAMES.has(name);
}

function looksBinary(abs: string): boolean {
  const fd = openSync(abs, 'r');
  try {
    const buf = Buffer.alloc(4096);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n).includes(0);
  } finally {
    closeSync(fd);
  }
}

export function isGitRepo(dir: string): boolean {
  try {
    return execFileSync('git', ['-C', dir, 'rev-parse', '--is-inside-work-tree'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() === 'true';
  } catch {
    return false;
  }
}

function walk(root: string, dir: string, out: string[]) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) walk(root, abs, out);
    } else if (entry.isFile()) out.push(relative(root, abs).split(sep).join('/'));
  }
}

/**
 * The files the locator ranks, as repository-relative paths with `/`: `git ls-files` in a git
 * checkout (tracked files, vendored directories skipped all the same), else a walk that skips
 * .git, node_modules, vendor and build directories. Binaries, files over 1 MB and files that
 * are neither source nor docs are left out.
 */
export function listCandidateFiles(repoDir: string): string[] {
  let paths: string[];
  if (isGitRepo(repoDir)) {
    const out = execFileSync('git', ['-C', repoDir, 'ls-files', '-z', '--cached', '--others', '--exclude-standard'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
    paths = out.split('\0').filter((p) => p && !p.split('/').some((part) => SKIP_DIRS.has(part)));
  } else {
    paths = [];
    walk(repoDir, repoDir, paths);
  }
  const result: string[] = [];
  for (const path of [...new Set(paths)].sort()) {
    if (!isCandidateName(path)) continue;
    const abs = join(repoDir, path);
    try {
      const st = statSync(abs);
      if (!st.isFile() || st.size > MAX_FILE_BYTES || looksBinary(abs)) continue;
    } catch {
      continue; // deleted in the working tree, or a broken link
    }
    result.push(path);
  }
  return result;
}
