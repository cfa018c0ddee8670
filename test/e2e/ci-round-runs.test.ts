import { connectedAccount } from '../support/host-service.js';
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { tasks } from '../../src/db/schema.js';
import { MARKER } from '../../src/triggers/decide.js';
import { hostEntry } from '../support/code-hosts.js';
import { waitFor, waitForStatus } from '../support/engine.js';
import { type FakeGitea, startFakeGitea } from '../support/fake-gitea/server.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type FakeGitLab, startFakeGitLab } from '../support/fake-gitlab/server.js';
import type { CiJobSpec } from '../support/fake-host/ci.js';
import { CALC_PROMPT, CALC_REPO, GOOD_FIX, editBlock, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { type ModelService, postFixTask, startModelService } from '../support/model-service.js';
import { heldPort } from '../support/ports.js';

/**
 * A CI round through the real pipeline, per host over real HTTP (docs/triggers.md, "CI
 * follow-ups"): a task opens a pull request (the scripted model, the sandbox, the validator, the
 * push); the host's CI fails on it, naming a failing test in its log; the delivery starts the
 * follow-up, which runs every step with the CI prompt, validates in the sandbox, pushes a new commit
 * onto the same branch without force, and answers in the pull request whether the sandbox
 * reproduced the failure. The same job failing after that push ends the rounds with a comment. On
 * GitHub, a log naming a test that passes in the sandbox: the answer says it was not reproduced.
 * (test/e2e/ci-follow-ups.test.ts covers the deliveries' decisions with runs ended by hand.)
 */

type Fake = FakeGitHub | FakeGitLab | FakeGitea;
type Kind = 'github' | 'gitlab' | 'gitea';

const HOSTS: { kind: Kind; start(): Promise<Fake>; alone?: true }[] = [
  { kind: 'github', start: () => startFakeGitHub(), alone: true },
  { kind: 'gitlab', start: () => startFakeGitLab() },
  { kind: 'gitea', start: () => startFakeGitea() },
];

/** calc plus a test that fails on the base already (shout() keeps the spaces): the pull request's CI fails on it. */
const REPO: Record<string, string> = {
  ...CALC_REPO,
  'tests/test_text.py': 'from calc.text import shout\n\n\ndef test_shout():\n    assert shout(" hi ") == "HI!"\n',
};
const FAILING_TEST = 'tests/test_text.py::test_shout';

/** The CI follow-up's change: shout() strips the spaces. */
const CI_FIX = `shout() must strip the spaces first.\n\n${editBlock(
  '    return s.upper() + "!"',
  '    return s.strip().upper() + "!"',
  'calc/text.py',
)}`;

const SECRET_IN_LOG = `glpat-${'Zx9Yw8Vu7T'.repeat(2)}`;

/** The failing job's log as the host's runner writes it (GitLab: sections; the others: step groups). */
function failingLog(kind: Kind): string {
  const run = [
    'collected 3 items',
    'tests/test_ops.py ..',
    'tests/test_text.py F',
    '=========================== short test summary info ============================',
    `FAILED ${FAILING_TEST} - AssertionError: assert ' HI !' == 'HI!'`,
    `pushing with https://ci:${SECRET_IN_LOG}@example.com/calc.git`,
    '========================= 1 failed, 2 passed in 0.05s ==========================',
  ];
  if (kind === 'gitlab')
    return [
      'section_start:1700000002:step_script\r\x1b[0KExecuting "step_script" stage of the job script',
      '$ pytest',
      ...run,
      'section_end:1700000009:step_script\r\x1b[0K',
      'ERROR: Job failed: exit code 1',
    ].join('\n');
  return ['##[group]Run pytest', 'pytest', '##[endgroup]', ...run, '##[error]Process completed with exit code 1.'].join(
    '\n',
  );
}

const failing = (kind: Kind): CiJobSpec => ({
  name: 'test',
  state: 'failure',
  steps: [
    { name: 'Set up', state: 'success' },
    { name: 'Run tests', state: 'failure' },
  ],
  log: failingLog(kind),
});

/** How long a round's steps may take to show on the fake host. */
const WAIT_MS = 30_000;

const isCiRound = (text: string) => text.includes('its CI failed on');

/**
 * The service on a loopback port (the hook points there) with the scripted model (the CI round's
 * fixer answers CI_FIX, any other GOOD_FIX), an account connected to the host as the owner of
 * `calc` with triggers on; then emend's pull request on it, opened by an API task run through
 * every step.
 */
async function emendsPull(host: (typeof HOSTS)[number], f: Fake, keep: (svc: ModelService) => void) {
  const held = await heldPort();
  const entry = hostEntry(host.kind, f);
  const svc = await startModelService(
    {
      EMEND_BASE_URL: `http://127.0.0.1:${held.port}`,
      ...(host.alone ? { EMEND_SCM_HOSTS: JSON.stringify([entry]) } : {}),
    },
    'openai',
    host.alone ? {} : { hosts: [entry] },
  );
  keep(svc);
  const { h, model } = svc;
  await held.release();
  await h.app.listen({ port: held.port, host: '127.0.0.1' });
  const script = scriptCalcRun(model, (req) => ({ text: isCiRound(req.text) ? CI_FIX : GOOD_FIX }));

  const { account, user } = await connectedAccount(h, f, host.kind, { credits: 5 });
  const ns = user.login;
  f.createRepo(ns, 'calc', { files: REPO });
  const repoUrl = `${f.webUrl}/${ns}/calc`;
  const on = await h.app.inject({
    method: 'PUT',
    url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repoUrl)}`,
    headers: account.auth,
    payload: {},
  });
  expect(on.statusCode, on.body).toBe(201);

  const openerId = await postFixTask(h, account.auth, repoUrl, { prompt: CALC_PROMPT });
  const opener = await waitForStatus(h, openerId, ['done', 'failed', 'cancelled'], 120_000);
  expect(opener.status, opener.error ?? '').toBe('done');
  const [pull, ...others] = f.pulls(ns, 'calc');
  expect(others).toEqual([]);
  const branch = pull!.head.ref;
  const thread = { kind: 'pull' as const, number: pull!.number };
  return {
    h,
    model,
    script,
    ns,
    opener,
    branch,
    headBefore: f.branchHead(ns, 'calc', branch)!,
    /** emend's comments in the pull request. */
    mine: () => f.threadComments(ns, 'calc', thread).filter((c) => c.body.includes(MARKER)),
  };
}

/** The CI follow-up of emend's pull request, once the delivery has started it, run to its end. */
async function roundRun(h: ModelService['h'], openerId: string) {
  const follow = await waitFor(
    'the CI follow-up',
    async () => {
      const [row] = await h.deps.db
        .select()
        .from(tasks)
        .where(and(eq(tasks.parentId, openerId), isNotNull(tasks.trigger)));
      return row;
    },
    WAIT_MS,
  );
  const ended = await waitForStatus(h, follow.id, ['done', 'failed', 'cancelled'], 150_000);
  expect(ended.status, ended.error ?? '').toBe('done');
  return { follow, ended };
}

describe.each(HOSTS)('a CI round run through the pipeline on $kind', { timeout: 240_000 }, (host) => {
  let svc: ModelService | undefined;
  let fake: Fake | undefined;
  afterEach(async () => {
    await svc?.close();
    await fake?.close();
    svc = fake = undefined;
  });

  it("a task's pull request fails CI -> the follow-up runs, validates, pushes onto the branch without force, and says the sandbox reproduced the failure; the same job failing again ends the rounds", async () => {
    const f = await host.start();
    fake = f;
    const { h, model, script, ns, opener, branch, headBefore, mine } = await emendsPull(host, f, (s) => {
      svc = s;
    });
    const openerId = opener.id;

    // Its CI fails on the test the base already failed; the delivery starts the round.
    const sent = await f.reportCi(ns, 'calc', {
      branch,
      jobs: [failing(host.kind), { name: 'lint', state: 'success' }],
    });
    expect(sent.answers.map((a) => a.status)).toContain(202);
    const { follow, ended } = await roundRun(h, openerId);
    expect(follow.baseBranch).toBe(branch);
    expect(follow.trigger).toMatchObject({ kind: 'ci', ci: { sha: headBefore, round: 1, tests: [FAILING_TEST] } });

    // The pipeline carried the CI prompt to the model: the job, the failing test, the log's tail, no secret.
    const asked = model.calls.filter((c) => isCiRound(c.text));
    expect(new Set(asked.map(stepOf))).toEqual(new Set(['planner', 'locator', 'inspector', 'fixer']));
    const fixerAsked = script.fixerCalls().find((c) => isCiRound(c.text))!;
    expect(fixerAsked.text).toContain(`failing tests: ${FAILING_TEST}`);
    expect(fixerAsked.text).toContain(`FAILED ${FAILING_TEST}`);
    for (const c of model.calls) expect(`${c.system}\n${c.text}`).not.toContain(SECRET_IN_LOG);
    expect(fixerAsked.text).toContain('[redacted]');

    // One pull request still; a new commit on its branch, built on the old head (no force push).
    expect(f.pulls(ns, 'calc')).toHaveLength(1);
    expect(follow.parentId).toBe(openerId);
    const headAfter = f.branchHead(ns, 'calc', branch)!;
    expect(headAfter).not.toBe(headBefore);
    expect(f.isAncestor(ns, 'calc', headBefore, headAfter)).toBe(true);
    const files = f.files(ns, 'calc', branch);
    expect(files['calc/text.py']).toContain('s.strip().upper()');
    expect(files['calc/ops.py']).toContain('return a + b');
    expect(ended.prUrl).toBe(opener.prUrl);

    // The answer, edited in place: the push, and that the sandbox reproduced the failure.
    const answer = await waitFor(
      'the answer brought up to date',
      async () => {
        const [a, ...more] = mine();
        return more.length === 0 && a?.body.includes('emend pushed a fix for the failing CI') ? a : undefined;
      },
      WAIT_MS,
    );
    expect(answer.body).toContain(
      `The sandbox reproduced the failure: ${FAILING_TEST} failed there before the change and passes now.`,
    );
    expect(answer.body).toContain(`/app/tasks/${follow.id}`);
    expect(answer.body).not.toContain(SECRET_IN_LOG);

    // The same job fails on the round's push: the rounds end, said once in the pull request.
    const again = await f.reportCi(ns, 'calc', { branch, jobs: [failing(host.kind)] });
    expect(again.run.sha).toBe(headAfter);
    const stop = await waitFor(
      'the rounds ended',
      async () => mine().find((c) => c.body.includes('failed again')),
      WAIT_MS,
    );
    expect(stop.body).toContain(`\`test\` failed again after emend's follow-up (on ${headAfter.slice(0, 7)})`);
    const followUps = await h.deps.db.select().from(tasks).where(eq(tasks.parentId, openerId));
    expect(followUps.map((t) => t.id)).toEqual([follow.id]);
  });
});

describe('a CI failure the sandbox does not reproduce, through the pipeline', { timeout: 240_000 }, () => {
  let svc: ModelService | undefined;
  let fake: Fake | undefined;
  afterEach(async () => {
    await svc?.close();
    await fake?.close();
  });

  it('the log names a test that passes in the sandbox before the change: the answer says so, and that the change is untested until CI runs again', async () => {
    const host = HOSTS[0]!;
    const f = await host.start();
    fake = f;
    const { h, ns, opener, branch, mine } = await emendsPull(host, f, (s) => {
      svc = s;
    });
    // CI's mul test fails (another platform, say); in the sandbox it passes on the pull request's head.
    const elsewhere = 'tests/test_ops.py::test_mul';
    const log = failingLog('github').replaceAll(FAILING_TEST, elsewhere);
    await f.reportCi(ns, 'calc', { branch, jobs: [{ ...failing('github'), log }] });
    const { follow } = await roundRun(h, opener.id);
    expect(follow.trigger!.ci!.tests).toEqual([elsewhere]);
    const answer = await waitFor(
      'the answer brought up to date',
      async () => mine().find((c) => c.body.includes('emend pushed a fix for the failing CI')),
      WAIT_MS,
    );
    expect(answer.body).toContain(
      `The sandbox could not reproduce the failure of ${elsewhere} (it passed there before the change): the change is untested until CI runs again.`,
    );
    expect(answer.body).not.toContain('The sandbox reproduced');
  });
});
