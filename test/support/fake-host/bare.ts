import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

/** A commit's content: `files` (null deletes), `links` (symlinks, path → target), its message and author. */
export type CommitContent = {
  files: Record<string, string | null>;
  links?: Record<string, string>;
  message?: string;
  author?: Identity;
};

/** The file in each bare repository listing its protected refs, one `refs/heads/X` a line. */
const PROTECTED_FILE = 'fake-host-protected';

/** `2024-01-02T03:04:05Z`, as the hosts write times. */
export const isoSeconds = (date: string | Date): string => new Date(date).toISOString().replace(/\.\d{3}Z$/, 'Z');

export class Bare {
  readonly env: NodeJS.ProcessEnv;
  private readonly hook: string;
  /**
   * `refusal`: shell lines the pre-receive hook runs for an update of a protected branch, writing
   * the host's words to stderr (git prefixes them with "remote: "), with `$ref` and `$branch` set.
   */
  constructor(
    readonly scratch: string,
    refusal: string,
  ) {
    this.hook = `#!/bin/sh
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
    const isolated = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };
    this.env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: scratch, ...isolated, LANG: 'C' };
  }
  run(dir: string, args: string[], opts: { input?: string | Buffer; env?: NodeJS.ProcessEnv } = {}): string {
    const how = { input: opts.input, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: 'pipe' } as const;
    return execFileSync('git', ['--git-dir', dir, ...args], { env: { ...this.env, ...opts.env }, ...how });
  }
  /** Like run, but undefined instead of throwing when git exits non-zero. */
  tryRun(dir: string, args: string[]): string | undefined {
    try {
      return this.run(dir, args);
    } catch {
      return undefined;
    }
  }
  /** A new bare repository, or (`from`) a copy of every branch and tag of one (a fork); with the hook. */
  init(dir: string, branch: string, from?: string): void {
    mkdirSync(dir, { recursive: true });
    const args = from
      ? ['clone', '--quiet', '--bare', '--no-local', from, dir]
      : ['init', '--quiet', '--bare', `--initial-branch=${branch}`, dir];
    execFileSync('git', args, { env: this.env, stdio: 'ignore' });
    if (from) this.run(dir, ['remote', 'remove', 'origin']);
    mkdirSync(join(dir, 'hooks'), { recursive: true });
    writeFileSync(join(dir, 'hooks', 'pre-receive'), this.hook, { mode: 0o755 });
    this.run(dir, ['symbolic-ref', 'HEAD', `refs/heads/${branch}`]);
    this.setProtected(dir, []);
  }
  setProtected(dir: string, branches: Iterable<string>): void {
    writeFileSync(join(dir, PROTECTED_FILE), [...branches].map((b) => `refs/heads/${b}\n`).join(''));
  }
  resolve(dir: string, rev: string): string | undefined {
    return this.branchHead(dir, rev) ?? this.commitOf(dir, rev);
  }
  branchHead(dir: string, branch: string): string | undefined {
    return this.commitOf(dir, `refs/heads/${branch}`);
  }
  private commitOf(dir: string, rev: string): string | undefined {
    return this.tryRun(dir, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`])?.trim() || undefined;
  }
  branches(dir: string): string[] {
    return this.run(dir, ['for-each-ref', '--format=%(refname:lstrip=2)', 'refs/heads/']).split('\n').filter(Boolean);
  }
  /**
   * One commit of `files` and `links` (mode 120000, as git stores symlinks) on top of `parent`
   * (none: a root commit), written with plumbing and a scratch index; the ref is not moved.
   */
  commitFiles(dir: string, parent: string | undefined, c: CommitContent & { author: Identity }): string {
    const tmp = mkdtempSync(join(this.scratch, 'index-'));
    const env = { GIT_INDEX_FILE: join(tmp, 'index') };
    // Five git processes a commit whatever its size (the blobs in one hash-object, the index in one
    // update-index): a test process holding a database pays for every child it starts
    // (bench/spawn-cost.ts), and repositories are made in most tests.
    const added = [
      ...Object.entries(c.files).flatMap(([path, content]) => (content === null ? [] : [['100644', path, content]])),
      ...Object.entries(c.links ?? {}).map(([path, target]) => ['120000', path, target]),
    ] as [string, string, string][];
    try {
      this.run(dir, ['read-tree', parent ?? '--empty'], { env });
      const sources = added.map(([, , content], i) => {
        const source = join(tmp, `blob-${i}`);
        writeFileSync(source, content);
        return source;
      });
      const blobs =
        sources.length > 0
          ? this.run(dir, ['hash-object', '-w', '--no-filters', '--stdin-paths'], { input: `${sources.join('\n')}\n` })
              .trim()
              .split('\n')
          : [];
      const removed = Object.entries(c.files).filter(([, content]) => content === null);
      // mode 0 takes a path out of the index (git update-index --index-info)
      const lines = [
        ...removed.map(([path]) => `0 ${'0'.repeat(40)}\t${path}`),
        ...added.map(([mode, path], i) => `${mode} ${blobs[i]}\t${path}`),
      ];
      // NUL-terminated: a test's path may hold any byte but NUL
      if (lines.length > 0)
        this.run(dir, ['update-index', '-z', '--index-info'], { env, input: `${lines.join('\0')}\0` });
      const tree = this.run(dir, ['write-tree'], { env }).trim();
      return this.commitTree(dir, tree, parent ? [parent] : [], c.message ?? 'change', c.author);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  commitTree(dir: string, tree: string, parents: string[], message: string, who: Identity): string {
    const [name, email] = [who.name, who.email];
    const env = {
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
    };
    return this.run(dir, ['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])], { input: message, env }).trim();
  }
  setRef(dir: string, ref: string, sha: string): void {
    this.run(dir, ['update-ref', ref.startsWith('refs/') ? ref : `refs/heads/${ref}`, sha]);
  }
  /** The commit `ref` of the repository at `from` names, its objects brought into `to` (and the ref, as `target`). */
  fetchRef(to: string, from: string, ref: string, target?: string): string | undefined {
    const into = target ?? 'refs/fake-host/fetched';
    if (this.tryRun(to, ['fetch', '--quiet', '--no-tags', from, `+${ref}:${into}`]) === undefined) return undefined;
    const sha = this.resolve(to, into);
    if (!target) this.tryRun(to, ['update-ref', '-d', into]);
    return sha;
  }
  isAncestor(dir: string, ancestor: string, descendant: string): boolean {
    return this.tryRun(dir, ['merge-base', '--is-ancestor', ancestor, descendant]) !== undefined;
  }
  /** The merged tree of two commits, or undefined on conflicts (git merge-tree --write-tree). */
  mergeTree(dir: string, ours: string, theirs: string): string | undefined {
    return this.tryRun(dir, ['merge-tree', '--write-tree', ours, theirs])?.split('\n')[0]?.trim() || undefined;
  }
  /** Commits reachable from `head` and not from `base`, oldest first; or (`one`) the commit `head` alone. */
  log(dir: string, base: string | undefined, head: string, one = false): CommitInfo[] {
    const format = '--format=%H%x1f%T%x1f%P%x1f%an%x1f%ae%x1f%aI%x1f%cn%x1f%ce%x1f%cI%x1f%B';
    const range = one ? ['-1', head] : ['--reverse', head, ...(base ? [`^${base}`] : [])];
    const out = this.run(dir, ['log', '-z', format, ...range, '--']);
    const entries = out.split('\0').filter((entry) => entry.trim() !== '');
    return entries.map((entry) => {
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
  files(dir: string, rev: string): Record<string, string> {
    const paths = this.run(dir, ['ls-tree', '-r', '-z', '--name-only', rev]).split('\0').filter(Boolean);
    return Object.fromEntries(paths.map((path) => [path, this.run(dir, ['cat-file', 'blob', `${rev}:${path}`])]));
  }
  diff(dir: string, base: string, head: string): string {
    return this.run(dir, ['diff', base, head, '--']);
  }
}
