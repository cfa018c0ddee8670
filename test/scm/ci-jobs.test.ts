import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostKind } from '../../src/scm/code-host.js';
import { giteaKind } from '../../src/scm/gitea/gitea.js';
import { gitHubKind } from '../../src/scm/github/github.js';
import { gitLabKind } from '../../src/scm/gitlab/gitlab.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';

/**
 * A commit's CI through each adapter (`ciJobs`, `ciLog`), over real HTTP against the host's
 * double: the jobs with their states and failing steps, their logs, a status another service
 * posted (no log), a pull request's head and branch (`pull`), and Gitea without the Actions API.
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;

const HOSTS: {
  name: string;
  start(): Promise<Fake>;
  kind: HostKind;
  statuses: boolean;
  step: string;
  source: string;
}[] = [
  {
    name: 'GitHub',
    start: () => startFakeGitHub(),
    kind: gitHubKind,
    statuses: true,
    step: 'Run tests',
    source: 'GitHub Actions',
  },
  // GitLab's jobs are its pipeline's: no statuses from elsewhere here; the stage stands for the step.
  {
    name: 'GitLab',
    start: () => startFakeGitLab(),
    kind: gitLabKind,
    statuses: false,
    step: 'test',
    source: 'GitLab CI',
  },
  {
    name: 'Gitea',
    start: () => startFakeGitea(),
    kind: giteaKind,
    statuses: true,
    step: 'Run tests',
    source: 'Gitea Actions',
  },
];

describe.each(HOSTS)('CI of a commit on $name', (c) => {
  let fake: Fake;
  let token = '';
  const host = () => c.kind.client({ apiUrl: fake.apiUrl, fetch, token });

  beforeAll(async () => {
    fake = await c.start();
    token = fake.addUser('olga').token;
    fake.createRepo('olga', 'widget');
    fake.commit('olga', 'widget', { branch: 'fix', from: 'main', files: { 'a.txt': 'a\n' } });
  });
  afterAll(async () => {
    await fake?.close();
  });

  it('lists the jobs with their states, the failing step, and reads a failing job’s log', async () => {
    const { run } = await fake.reportCi('olga', 'widget', {
      branch: 'fix',
      jobs: [
        {
          name: 'test',
          state: 'failure',
          steps: [
            { name: 'Set up', state: 'success' },
            { name: 'Run tests', state: 'failure' },
          ],
          log: 'FAILED tests/test_a.py::test_one\n',
        },
        { name: 'lint', state: 'success' },
        { name: 'build', state: 'running' },
        ...(c.statuses
          ? [{ name: 'ci/jenkins', state: 'failure' as const, status: true, description: 'Build broke' }]
          : []),
      ],
    });
    const jobs = await host().ciJobs('olga', 'widget', run.sha);
    const byName = Object.fromEntries(jobs.map((j) => [j.name, j]));
    expect(byName.test).toMatchObject({ state: 'failed', step: c.step, hasLog: true, source: c.source });
    expect(byName.lint).toMatchObject({ state: 'passed' });
    expect(byName.build).toMatchObject({ state: 'pending' });
    expect(await host().ciLog('olga', 'widget', byName.test!)).toBe('FAILED tests/test_a.py::test_one\n');
    if (c.statuses) {
      expect(byName['ci/jenkins']).toMatchObject({
        state: 'failed',
        hasLog: false,
        summary: 'Build broke',
        source: 'a commit status',
      });
      expect(await host().ciLog('olga', 'widget', byName['ci/jenkins']!)).toBeNull();
      // Gitea Actions' own status for a job is the job, listed once.
      expect(jobs.filter((j) => j.name.includes('test'))).toHaveLength(1);
    }
    expect(jobs).toHaveLength(c.statuses ? 4 : 3);
  });

  it('reads a pull request’s head commit, branch and title, and whether its branch is in a fork', async () => {
    const opened = await host().openPull({
      ...{ owner: 'olga', name: 'widget', branch: 'fix', base: 'main', title: 'Fix it', body: '', draft: false },
    });
    const pull = await host().pull('olga', 'widget', opened.number);
    expect(pull).toMatchObject({ title: 'Fix it', headRef: 'fix', fromFork: false, state: 'open' });
    expect(pull.headSha).toBe(fake.branchHead('olga', 'widget', 'fix'));
  });

  if (c.name === 'Gitea')
    it('without the Actions API (Gitea before 1.24), the statuses are all there is, with no log', async () => {
      const { run } = await fake.reportCi('olga', 'widget', {
        branch: 'fix',
        jobs: [{ name: 'test', state: 'failure', log: 'boom\n' }],
      });
      fake.failNext('GET', /\/actions\/runs$/, { status: 404, body: { message: 'not found' } });
      const jobs = await host().ciJobs('olga', 'widget', run.sha);
      const test = jobs.find((j) => j.name === 'CI / test (push)');
      expect(test).toMatchObject({ state: 'failed', hasLog: false, source: 'a commit status' });
      expect(await host().ciLog('olga', 'widget', test!)).toBeNull();
    });
});
