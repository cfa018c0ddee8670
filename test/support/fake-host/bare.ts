import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Plumbing over the fake's bare repositories. Everything the test-side API does to a repository
 * (commits, forks, merges) goes through these, never through a push, so the repositories' hooks
 * (branch protection) apply to pushes over HTTP only.
 */

export interface Identity {
  name: string;
  email: string;
}

export interface CommitInfo {
  sha: string;
  tree: string;
  parents: string[];
  message: string;
  author: Identity & { date: string };
  committer: Identity & { date: string };
}

/** The file in each bare repository listing its protected refs, one `refs/heads/X` a line. */
export const PROTECTED_FILE = 'fake-github-protected';

/**
 * What the pre-receive hook prints when it refuses an update of a protected branch: shell lines
 * writing to stderr (git prefixes them with "remote: "), with `$ref` (refs/heads/X) and `$branch`
 * (X) set. GitHub's wording by default; another host's double passes its own.
 */
export const GITHUB_PROTECTED_REFUSAL = `    echo "error: GH006: Protected branch update failed for $ref." >&2
    echo "error: Changes must be made through a pull request." >&2`;

function preReceiveHook(refusal: string): string {
  return `#!/bin/sh
status=0
while read old new ref; do
  branch="\${ref#refs/heads/}"
  if [ -f "${PROTECTED_FILE}" ] && grep -qxF "$ref" "${PROTECTED_FILE}"; then
${refusal}
    status=1
  fi
done
exit $status
`;
}

export class Bare {
  readonly env: NodeJS.ProcessEnv;

  private readonly preReceive: string;

  constructor(
    readonly scratch: string,
    protectedRefusal: string = GITHUB_PROTECTED_REFUSAL,
  ) {
    this.preReceive = preReceiveHook(protectedRefusal);
    this.env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: scratch,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      LANG: 'C',
    };
  }

  run(dir: string, args: string[], opts: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): string {
    return execFileSync('git', ['--git-dir', dir, ...args], {
      env: { ...this.env, ...opts.env },
      input: opts.input,
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
  }

  /** Like run, but undefined instead of throwing when git exits non-zero. */
  tryRun(dir: string, args: string[]): string | undefined {
    try {
      return this.run(dir, args);
    } catch {
      return undefined;
    }
  }

  init(dir: string, branch: string): void {
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '--quiet', '--bare', `--initial-branch=${branch}`, dir], {
      env: this.env,
      stdio: 'ignore',
    });
    this.installHooks(dir);
  }

  /** A copy of every branch and tag of `from` (a fork). */
  copy(from: string, to: string): void {
    execFileSync('git', ['clone', '--quiet', '--bare', '--no-local', from, to], { env: this.env, stdio: 'ignore' });
    this.run(to, ['remote', 'remove', 'origin']);
    this.installHooks(to);
  }

  installHooks(dir: string): void {
    mkdirSync(join(dir, 'hooks'), { recursive: true });
    const hook = join(dir, 'hooks', 'pre-receive');
    writeFileSync(hook, this.preReceive);
    chmodSync(hook, 0o755);
  }

  setProtected(dir: string, branches: Iterable<string>): void {
    writeFileSync(join(dir, PROTECTED_FILE), [...branches].map((b) => `refs/heads/${b}\n`).join(''));
  }

  setHead(dir: string, branch: string): void {
    this.run(dir, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
  }

  /** The commit a branch name, ref or sha names, or undefined. */
  resolve(dir: string, rev: string): string | undefined {
    for (const candidate of [`refs/heads/${rev}`, rev]) {
      const sha = this.tryRun(dir, ['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`])?.trim();
      if (sha) return sha;
    }
    return undefined;
  }

  branchHead(dir: string, branch: string): string | undefined {
    return this.tryRun(dir, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`])?.trim() || undefined;
  }

  branches(dir: string): string[] {
    return this.run(dir, ['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/']).split('\n').filter(Boolean);
  }

  /**
   * One commit of `files` (null deletes) on top of `parent` (none: a root commit), written with
   * plumbing and a scratch index; the ref is not moved.
   */
  /** `links`: symlinks to commit, path → target (mode 120000, as git stores a symlink). */
  commitFiles(
    dir: string,
    parent: string | undefined,
    files: Record<string, string | null>,
    message: string,
    who: Identity,
    links: Record<string, string> = {},
  ): string {
    const tmp = mkdtempSync(join(this.scratch, 'index-'));
    const env = { GIT_INDEX_FILE: join(tmp, 'index') };
    try {
      if (parent) this.run(dir, ['read-tree', parent], { env });
      else this.run(dir, ['read-tree', '--empty'], { env });
      for (const [path, content] of Object.entries(files)) {
        if (content === null) {
          this.run(dir, ['update-index', '--force-remove', '--', path], { env });
        } else {
          const blob = this.run(dir, ['hash-object', '-w', '--stdin'], { input: content }).trim();
          this.run(dir, ['update-index', '--add', '--cacheinfo', `100644,${blob},${path}`], { env });
        }
      }
      for (const [path, target] of Object.entries(links)) {
        const blob = this.run(dir, ['hash-object', '-w', '--stdin'], { input: target }).trim();
        this.run(dir, ['update-index', '--add', '--cacheinfo', `120000,${blob},${path}`], { env });
      }
      const tree = this.run(dir, ['write-tree'], { env }).trim();
      return this.commitTree(dir, tree, parent ? [parent] : [], message, who);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  commitTree(dir: string, tree: string, parents: string[], message: string, who: Identity): string {
    const env = {
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_COMMITTER_NAME: who.name,
      GIT_COMMITTER_EMAIL: who.email,
    };
    return this.run(dir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])], { input: message, env }).trim();
  }

  /** Moves refs/heads/branch (or any full ref) to sha. */
  setRef(dir: string, ref: string, sha: string): void {
    this.run(dir, ['update-ref', ref.startsWith('refs/') ? ref : `refs/heads/${ref}`, sha]);
  }

  deleteRef(dir: string, ref: string): void {
    this.tryRun(dir, ['update-ref', '-d', ref]);
  }

  /** Brings `ref` of the repository at `from` into `to` as `target` (objects and the ref). */
  fetchRef(to: string, from: string, ref: string, target: string): string | undefined {
    if (to === from) {
      const sha = this.resolve(from, ref);
      if (sha) this.setRef(to, target, sha);
      return sha;
    }
    if (this.tryRun(to, ['fetch', '--quiet', '--no-tags', from, `+${ref}:${target}`]) === undefined) return undefined;
    return this.resolve(to, target);
  }

  isAncestor(dir: string, ancestor: string, descendant: string): boolean {
    return this.tryRun(dir, ['merge-base', '--is-ancestor', ancestor, descendant]) !== undefined;
  }

  /** The merged tree of two commits, or undefined on conflicts (git merge-tree --write-tree). */
  mergeTree(dir: string, ours: string, theirs: string): string | undefined {
    const out = this.tryRun(dir, ['merge-tree', '--write-tree', ours, theirs]);
    return out?.split('\n')[0]?.trim() || undefined;
  }

  /** Commits reachable from `head` and not from `base`, oldest first. */
  log(dir: string, base: string | undefined, head: string): CommitInfo[] {
    return this.logArgs(dir, ['--reverse', head, ...(base ? [`^${base}`] : [])]);
  }

  commitInfo(dir: string, sha: string): CommitInfo | undefined {
    const commit = this.resolve(dir, sha);
    return commit ? this.logArgs(dir, ['-1', commit])[0] : undefined;
  }

  private logArgs(dir: string, args: string[]): CommitInfo[] {
    const out = this.run(dir, [
      'log',
      '-z',
      '--format=%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%B',
      ...args,
      '--',
    ]);
    return out
      .split('\0')
      .filter((entry) => entry.trim() !== '')
      .map((entry) => {
        const [sha, tree, parents, an, ae, ad, cn, ce, cd, ...rest] = entry.split('\x1f');
        return {
          sha: sha!,
          tree: tree!,
          parents: parents ? parents.split(' ').filter(Boolean) : [],
          message: rest.join('\x1f').replace(/\n+$/, ''),
          author: { name: an!, email: ae!, date: isoSeconds(ad!) },
          committer: { name: cn!, email: ce!, date: isoSeconds(cd!) },
        };
      });
  }

  /** Every file at rev, as text. */
  files(dir: string, rev: string): Record<string, string> {
    const out: Record<string, string> = {};
    const paths = this.run(dir, ['ls-tree', '-r', '-z', '--name-only', rev]).split('\0').filter(Boolean);
    for (const path of paths) out[path] = this.run(dir, ['cat-file', 'blob', `${rev}:${path}`]);
    return out;
  }

  diff(dir: string, base: string, head: string): string {
    return this.run(dir, ['diff', base, head, '--']);
  }
}

/** `2024-01-02T03:04:05Z`, as GitHub writes times. */
export function isoSeconds(date: string | Date): string {
  return new Date(date).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
