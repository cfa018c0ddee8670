import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { branchName } from '../../../src/tasks/branch-name.js';
import { checkOpenPulls } from '../../../src/tasks/merge-tracking.js';
import { approveGate, waitForStatus } from '../../support/engine.js';
import { CALC_PLAN, CALC_REPO, GOOD_FIX, editBlock, scriptCalcRun } from '../../support/fix-script.js';
import { type Harness, newAccount } from '../../support/harness.js';
import {
  MANAGED_KEY,
  type ModelService,
  postFixTask,
  runFixTask,
  startModelService,
} from '../../support/model-service.js';

let svc: ModelService | undefined;
afterEach(async () => {
  await svc?.close();
  svc = undefined;
});

/** The repository without its tests: the validator has nothing to run, so the change is not validated. */
const UNTESTED = Object.fromEntries(
  Object.entries(CALC_REPO).filter(([p]) => !p.startsWith('tests/') && p !== 'pytest.ini'),
);

async function setUp(
  files: Record<string, string> = CALC_REPO,
  repoOpts: { collaborator?: boolean; allowDrafts?: boolean } = {},
  fixes: string[] = [GOOD_FIX],
) {
  svc = await startModelService();
  const { h, model } = svc;
  scriptCalcRun(model, fixes);
  const owner = await newAccount(h, { plan: 'pro', credits: 3 });
  h.github.createRepo('acme', 'calc', {
    files,
    collaborators: repoOpts.collaborator === false ? [] : [owner.scm!.login],
    allowDrafts: repoOpts.allowDrafts,
  });
  return { h, model, owner, repoUrl: `${h.github.webUrl}/acme/calc` };
}

/**
 * A manual task with its plan approved (200 asserted), waiting at the diff gate: its branch name is
 * known and nothing is pushed yet, so a test can set the host up before the pr step runs.
 */
async function atDiffGate(h: Harness, auth: Record<string, string>, repoUrl: string) {
  const id = await postFixTask(h, auth, repoUrl, { approval_mode: 'manual' });
  await waitForStatus(h, id, 'awaiting_plan', 60_000);
  expect((await approveGate(h, auth, id, { stage: 'plan' })).statusCode).toBe(200);
  await waitForStatus(h, id, 'awaiting_diff', 60_000);
  const row = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${id}`, headers: auth })).json().task;
  return { id, branch: branchName({ id, prompt: row.prompt }) };
}

const changedLines = (diff: string) => diff.split('\n').filter((l) => /^[-+](?![-+]{2})/.test(l));

/** Every file under a directory, for checks that a secret was never written anywhere. */
function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    if (!st) continue;
    if (st.isDirectory()) out.push(...allFiles(p));
    else if (st.isFile() && st.size < 5_000_000) out.push(p);
  }
  return out;
}

describe('the pr step against the fake GitHub', { timeout: 150_000 }, () => {
  it('opens a PR whose branch holds exactly the fixer’s diff, then tracks a human edit and the merge', async () => {
    const { h, owner, repoUrl } = await setUp();
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    const pulls = h.github.pulls('acme', 'calc');
    expect(pulls).toHaveLength(1);
    const pull = pulls[0]!;
    const expectedBranch = branchName({ id: task.id, prompt: task.prompt });
    expect(pull.head).toMatchObject({ owner: 'acme', ref: expectedBranch });
    expect(pull.base).toBe('main');
    expect(pull.draft).toBe(false);
    expect(pull.title).toBe('Make calc.ops.add return the sum instead of the difference');
    expect(pull.body).toContain(CALC_PLAN.summary);
    expect(pull.body).toContain('`calc/ops.py` (modified)');
    expect(pull.body).toMatch(/Passed: no new test failures/);
    expect(pull.body).toContain(task.id);
    expect(task.pr_url).toBe(`${h.github.webUrl}/acme/calc/pull/${pull.number}`);
    expect(byStep('pr')[0]!.output).toMatchObject({
      pr_url: task.pr_url,
      branch: expectedBranch,
      draft: false,
      fork: null,
    });
    // the branch holds the fixer's change and nothing else
    const fixerDiff = byStep('fixer')[0]!.output.diff as string;
    expect(changedLines(h.github.diff('acme', 'calc', 'main', expectedBranch))).toEqual(changedLines(fixerDiff));
    expect(h.github.files('acme', 'calc', expectedBranch)['calc/ops.py']).toContain('return a + b');

    // merge tracking: nothing new yet
    expect(await checkOpenPulls(h.deps)).toMatchObject({ checked: 1, merged: 0, edited: 0, failed: 0 });
    // a person pushes to the branch, then merges
    h.github.commit('acme', 'calc', {
      branch: expectedBranch,
      files: { 'calc/ops.py': 'def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n' },
      author: { name: 'Reviewer', email: 'reviewer@example.com' },
    });
    expect(await checkOpenPulls(h.deps)).toMatchObject({ checked: 1, merged: 0, edited: 1 });
    h.github.mergePull('acme', 'calc', pull.number);
    expect(await checkOpenPulls(h.deps)).toMatchObject({ checked: 1, merged: 1 });
    const after = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${task.id}`, headers: owner.auth })).json().task;
    expect(after).toMatchObject({ pr_merged: true, human_edit_after: true });
    expect(Date.parse(after.pr_merged_at)).toBeGreaterThan(0);
    // a merged PR is no longer asked about, and the metrics count it
    expect(await checkOpenPulls(h.deps)).toMatchObject({ checked: 0 });
    expect((await h.app.inject({ method: 'GET', url: '/metrics' })).body).toMatch(/^emend_prs_merged 1$/m);

    // the code-host token and the model key never reached a log line, a remote URL or a file of the data dir
    const secrets = [owner.scm!.token, MANAGED_KEY];
    for (const secret of secrets) expect(h.logLines.join('\n')).not.toContain(secret);
    for (const file of allFiles(h.deps.config.dataDir)) {
      const text = readFileSync(file, 'latin1');
      for (const secret of secrets) expect(text.includes(secret), `${file} holds a secret`).toBe(false);
      expect(text.includes(Buffer.from(`x-access-token:${owner.scm!.token}`).toString('base64')), file).toBe(false);
    }
  });

  it('a fix with its reproduction test: the test goes into the PR, whose description names it', async () => {
    const file = 'tests/test_add_negatives.py';
    const test = 'from calc.ops import add\n\n\ndef test_add_negatives():\n    assert add(-2, -3) == -5\n';
    const { h, owner, repoUrl } = await setUp(CALC_REPO, {}, [`${GOOD_FIX}\n${editBlock('', test.trimEnd(), file)}`]);
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    expect(byStep('validator')[0]!.output).toMatchObject({ passed: true, reproduction: { rule: 'reproduction' } });
    const pull = h.github.pulls('acme', 'calc')[0]!;
    const branch = branchName({ id: task.id, prompt: task.prompt });
    expect(h.github.files('acme', 'calc', branch)[file]).toBe(test);
    expect(pull.body).toContain(
      `Reproduction: \`${file}::test_add_negatives\` (in \`${file}\`) failed before the change and passes with it.`,
    );
  });

  it('pushes to a fork (made for the caller) when the caller cannot push to the repository', async () => {
    const { h, owner, repoUrl } = await setUp(CALC_REPO, { collaborator: false });
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    const login = owner.scm!.login;
    expect(h.github.repo(login, 'calc')).toMatchObject({ fork: true, parent: 'acme/calc' });
    const pull = h.github.pulls('acme', 'calc')[0]!;
    expect(pull.head).toMatchObject({ owner: login, ref: branchName({ id: task.id, prompt: task.prompt }) });
    expect(byStep('pr')[0]!.output).toMatchObject({ fork: `${login}/calc`, head: `${login}:${pull.head.ref}` });
    expect(h.github.branchHead('acme', 'calc', pull.head.ref)).toBeUndefined();
    expect(changedLines(h.github.diff('acme', 'calc', 'main', `refs/pull/${pull.number}/head`))).toEqual([
      '-    return a - b',
      '+    return a + b',
    ]);
  });

  it('opens a draft when the change could not be validated; a normal PR that says so where drafts are not allowed', async () => {
    const drafts = await setUp(UNTESTED);
    const first = await runFixTask(drafts.h, drafts.owner.auth, drafts.repoUrl, 'done');
    expect(first.byStep('validator')[0]!.output.passed).toBeNull();
    const draft = drafts.h.github.pulls('acme', 'calc')[0]!;
    expect(draft.draft).toBe(true);
    expect(draft.body).toMatch(/draft until a person has looked at it/);
    await svc!.close();

    const noDrafts = await setUp(UNTESTED, { allowDrafts: false });
    const second = await runFixTask(noDrafts.h, noDrafts.owner.auth, noDrafts.repoUrl, 'done');
    const pull = noDrafts.h.github.pulls('acme', 'calc')[0]!;
    expect(pull.draft).toBe(false);
    expect(pull.body).toMatch(/does not allow draft pull requests/);
    expect(second.byStep('pr')[0]!.output).toMatchObject({ draft: false, drafts_disallowed: true });
  });

  it(
    'a run resumed after its worker died pushes over the commit the dead run left on the task branch and keeps ' +
      'the pull request it opened',
    async () => {
      // Found by the soak: the dead run had pushed its commit; the resumed run's commit (same change,
      // another commit) was refused as non-fast-forward and the task failed.
      const { h, owner, repoUrl } = await setUp();
      const { id, branch } = await atDiffGate(h, owner.auth, repoUrl);
      h.github.commit('acme', 'calc', {
        branch,
        from: 'main',
        files: { 'calc/ops.py': 'def add(a, b):\n    return a + b  # the dead run\n' },
        message: 'the dead run',
      });
      // ... and opened the pull request before it died.
      const opened = await fetch(`${h.github.apiUrl}/repos/acme/calc/pulls`, {
        method: 'POST',
        headers: { authorization: `token ${owner.scm!.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ head: branch, base: 'main', title: 'opened by the dead run' }),
      });
      expect(opened.status).toBe(201);
      expect((await approveGate(h, owner.auth, id, { stage: 'diff' })).statusCode).toBe(200);
      const ended = await waitForStatus(h, id, ['done', 'failed'], 100_000);
      expect(ended.error).toBeNull();
      expect(ended.status).toBe('done');
      expect(h.github.files('acme', 'calc', branch)['calc/ops.py']).not.toContain('the dead run');
      const pulls = h.github.pulls('acme', 'calc');
      expect(pulls.map((p) => p.head.ref)).toEqual([branch]);
      expect(ended.prUrl).toBe(`${h.github.webUrl}/acme/calc/pull/${pulls[0]!.number}`);
    },
  );

  it('fails the task with the host’s words for a protected branch, a refused push and a 422', async () => {
    // protected: the branch name is known once the task exists; the diff gate holds the run until then
    const { h, owner, repoUrl } = await setUp();
    const { id, branch } = await atDiffGate(h, owner.auth, repoUrl);
    h.github.protectBranches('acme', 'calc', [branch]);
    expect((await approveGate(h, owner.auth, id, { stage: 'diff' })).statusCode).toBe(200);
    const protectedRun = await waitForStatus(h, id, ['done', 'failed'], 100_000);
    expect(protectedRun.status).toBe('failed');
    expect(protectedRun.error).toMatch(
      /^pr failed: the code host refused the push to acme\/calc: .*GH006: Protected branch update failed/,
    );

    // a 422 from the pulls endpoint
    h.github.failNext('POST', /\/pulls$/, {
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: [{ resource: 'PullRequest', code: 'custom', message: 'A pull request already exists for acme:x.' }],
      },
    });
    const unprocessable = await runFixTask(h, owner.auth, repoUrl, 'failed');
    expect(unprocessable.task.error).toMatch(/HTTP 422: Validation Failed: A pull request already exists for acme:x\./);

    // a collaborator whose token may read but not write: the push is refused
    const reader = h.github.addUser(owner.scm!.login, {
      token: 'ghp_readonly_000000000000000000000000000',
      readOnly: true,
    });
    expect(
      (await h.app.inject({ method: 'POST', url: '/v1/me/scm', headers: owner.auth, payload: { token: reader.token } }))
        .statusCode,
    ).toBe(200);
    const refused = await runFixTask(h, owner.auth, repoUrl, 'failed');
    expect(refused.task.error).toMatch(/pr failed: .*(403|denied)/);
    expect(h.logLines.join('\n')).not.toContain(reader.token);
  });
});
