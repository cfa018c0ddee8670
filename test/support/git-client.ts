import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isolatedGitEnv } from './git-env.js';

export interface GitRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The git CLI against a fake code host, in a home directory of its own. */
export interface GitClient {
  home: string;
  /** git with the token in a Basic header (never in the URL); no token: anonymous. */
  git(cwd: string, token: string | undefined, ...args: string[]): Promise<GitRun>;
  /** A clone of `${webUrl}${path}` into a new directory under home. */
  clone(token: string | undefined, path: string): Promise<GitRun & { dir: string }>;
  close(): void;
}

/**
 * git as the pr step runs it, Alice as author and committer, with no user or system config.
 * Asynchronous on purpose: the fake answers from this same process (a synchronous git hangs it).
 * `basicUser`: the user name beside the token (the host's git user).
 */
export function gitClient(webUrl: string, basicUser: string): GitClient {
  const home = mkdtempSync(join(tmpdir(), 'emend-git-client-'));
  const env = {
    ...isolatedGitEnv(home),
    GIT_ASKPASS: '',
    GIT_AUTHOR_NAME: 'Alice',
    GIT_AUTHOR_EMAIL: 'alice@users.example.com',
    GIT_COMMITTER_NAME: 'Alice',
    GIT_COMMITTER_EMAIL: 'alice@users.example.com',
  };
  const git: GitClient['git'] = (cwd, token, ...args) => {
    const basic = Buffer.from(`${basicUser}:${token}`).toString('base64');
    const auth = token ? ['-c', `http.extraHeader=Authorization: Basic ${basic}`] : [];
    const child = spawn('git', [...auth, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
  };
  return {
    home,
    git,
    async clone(token, path) {
      const dir = mkdtempSync(join(home, 'clone-'));
      rmSync(dir, { recursive: true });
      return { dir, ...(await git(home, token, 'clone', '--quiet', `${webUrl}${path}`, dir)) };
    },
    close: () => rmSync(home, { recursive: true, force: true }),
  };
}
