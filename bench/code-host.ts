import type { Deps } from '../src/deps.js';
import { connectScm } from '../src/workspaces/scm-connection.js';
import { type FakeGitHub, startFakeGitHub } from '../test/support/fake-github/server.js';

/**
 * The code host the benchmarks' tasks name: task creation asks it whether the repository
 * exists (one loopback HTTP round trip per POST, in emend and the bare app alike), and
 * pull-request runs need a connected account.
 */
export interface BenchCodeHost {
  github: FakeGitHub;
  /** Configuration for a runtime that asks this host. */
  env: Record<string, string>;
  /** Connects an account to a user of its own on the host, through the service's own path. */
  connect(deps: Pick<Deps, 'db' | 'config' | 'fetch' | 'secretKey' | 'clock'>, accountId: string): Promise<void>;
  close(): Promise<void>;
}

let users = 0;

export async function startBenchCodeHost(repos: [string, string][]): Promise<BenchCodeHost> {
  const github = await startFakeGitHub();
  for (const [owner, name] of repos) github.createRepo(owner, name);
  return {
    github,
    env: { EMEND_SCM_API_URL: github.apiUrl },
    connect: async (deps, accountId) => {
      const user = github.addUser(`bench-user-${++users}`);
      await connectScm(deps, accountId, user.token);
    },
    close: () => github.close(),
  };
}
