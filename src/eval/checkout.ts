import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type GitEnv, runGit } from '../checkout/git.js';

/** Where an instance's repository comes from: a directory of local mirrors, else a clone URL. */
export interface RepoSource {
  /** Holds `<owner>+<name>/repo` or `<owner>+<name>` git directories (as the search tools' fetch leaves them). */
  mirrors?: string;
  /**
   * The clone URL for a repository without a mirror; `{repo}` stands for owner/name. Without
   * mirrors it defaults to GitHub's; with mirrors, a repository missing there is an error
   * unless it is given (no surprise download in an offline run).
   */
  urlTemplate?: string;
}

export const DEFAULT_URL_TEMPLATE = 'https://github.com/{repo}.git';

/** The git directory of a repository's mirror, or undefined when there is none. */
export function mirrorGitDir(mirrors: string, repo: string): string | undefined {
  const base = join(mirrors, repo.replace('/', '+'));
  return [join(base, 'repo'), base].find((dir) => existsSync(join(dir, 'objects')) && existsSync(join(dir, 'HEAD')));
}

export class CheckoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckoutError';
  }
}

/**
 * The repository at `commit` in `dir` (made here, inside a directory the caller owns and
 * removes). From a mirror, a shared clone: the mirror's objects are read, never written. Every
 * git call goes through runGit (hooks and fsmonitor off, no user or system config), since the
 * repository is someone else's. With `gitDir`, the git directory is made there, outside the
 * files, as a task's checkout keeps it (the fix pipeline runs repository code on the files).
 * Returns the full hash of the commit checked out and its committer date.
 */
export async function checkoutAt(
  repo: string,
  commit: string,
  dir: string,
  source: RepoSource,
  home: string,
  gitDir: string = join(dir, '.git'),
): Promise<{ from: string; commit: string; date: Date }> {
  await mkdir(home, { recursive: true });
  const env: GitEnv = { home };
  const mirror = source.mirrors ? mirrorGitDir(source.mirrors, repo) : undefined;
  if (source.mirrors && !mirror && source.urlTemplate === undefined)
    throw new CheckoutError(`no mirror of ${repo} under ${source.mirrors} (and no --clone-url)`);
  const from = mirror ?? (source.urlTemplate ?? DEFAULT_URL_TEMPLATE).replace('{repo}', repo);
  const separate = gitDir === join(dir, '.git') ? [] : [`--separate-git-dir=${gitDir}`];
  try {
    if (mirror) {
      await runGit(env, {
        args: ['clone', '--quiet', '--shared', '--no-checkout', ...separate, mirror, dir],
        allowFile: true,
        safeDirs: [mirror],
      });
    } else {
      await runGit(env, {
        args: ['clone', '--quiet', '--no-checkout', ...separate, from, dir],
        remote: { url: from },
      });
    }
    const at = { gitDir, workTree: dir, cwd: dir };
    await runGit(env, { args: ['checkout', '--quiet', '--detach', commit], ...at });
    const head = await runGit(env, { args: ['show', '-s', '--format=%H %cI', 'HEAD'], ...at });
    const [hash, iso] = head.stdout.trim().split(' ');
    return { from, commit: hash!, date: new Date(iso!) };
  } catch (err) {
    throw new CheckoutError(`could not check out ${repo} at ${commit} from ${from}: ${(err as Error).message}`);
  }
}
