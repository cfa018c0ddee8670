import { randomUUID } from 'node:crypto';
import { and, eq, isNotNull } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoTriggers, tasks, triggerDeliveries } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { hostById } from '../../src/scm/hosts.js';
import { branchName } from '../../src/tasks/branch-name.js';
import { MARKER } from '../../src/triggers/decide.js';
import { hostFor } from '../../src/workspaces/scm-connection.js';
import type { CiJobSpec } from '../support/fake-host/ci.js';
import { CALC_REPO } from '../support/fix-script.js';
import { waitFor } from '../support/engine.js';
import { forceStatus } from '../support/harness.js';
import {
  FAKE_HOSTS,
  type FakeHost,
  type HostKind,
  type HostService,
  startHostService,
} from '../support/host-service.js';

/**
 * CI follow-ups (docs/triggers.md, "CI follow-ups"), per host over real HTTP: the fake host
 * reports CI on a pull request emend opened (GitHub check runs, a check suite and statuses; a
 * GitLab pipeline; Gitea statuses, Actions jobs and a run) and delivers its events signed; emend
 * reads the failing jobs and their logs through the host's API and starts the follow-up. The
 * worker acts on deliveries only (no task runs: a round's task is ended by hand, its push made
 * on the fake), so each host's harness serves every test of its block.
 */

type Fake = FakeHost;
type Kind = HostKind;

const SECRET_IN_LOG = `ghp_${'A1b2C3d4'.repeat(5)}`;

/** A failing test run's log as each host's runner writes it: timestamps and step groups, GitLab's sections; colours everywhere. */
function failingLog(kind: Kind): string {
  const run = [
    '\x1b[1m============================= test session starts ==============================\x1b[0m',
    'collected 4 items',
    'tests/test_ops.py ..F.',
    '=========================== short test summary info ============================',
    '\x1b[31mFAILED tests/test_ops.py::test_add - assert -1 == 5\x1b[0m',
    `deploying with GH_TOKEN=${SECRET_IN_LOG}`,
    '========================= 1 failed, 3 passed in 0.12s ==========================',
  ];
  if (kind === 'gitlab')
    return [
      'section_start:1700000000:prepare_executor\r\x1b[0KPreparing the "docker" executor',
      'Using docker image python:3.12',
      'section_end:1700000001:prepare_executor\r\x1b[0K',
      'section_start:1700000002:step_script\r\x1b[0KExecuting "step_script" stage of the job script',
      '$ pytest',
      ...run,
      'section_end:1700000009:step_script\r\x1b[0K',
      '\x1b[31;1mERROR: Job failed: exit code 1\x1b[0;m',
    ].join('\n');
  const stamp = (i: number) => `2026-05-01T10:00:0${i % 10}.1234567Z `;
  return [
    '##[group]Run actions/checkout@v4',
    'Syncing repository',
    '##[endgroup]',
    '##[group]Run pytest',
    'pytest',
    'shell: /usr/bin/bash -e {0}',
    '##[endgroup]',
    ...run,
    '##[error]Process completed with exit code 1.',
  ]
    .map((l, i) => stamp(i) + l)
    .join('\n');
}

/** The test job failing at its test step, as the host's CI reports it. */
const failing = (kind: Kind, name = 'test'): CiJobSpec => ({
  name,
  state: 'failure',
  stage: 'test',
  steps: [
    { name: 'Set up', state: 'success' },
    { name: 'Run tests', state: 'failure' },
  ],
  log: failingLog(kind),
});

/** How long a delivery may take to be acted on. */
const WAIT_MS = 20_000;

describe.each(FAKE_HOSTS)('CI follow-ups on $kind', { timeout: 60_000 }, (host) => {
  let svc: HostService;
  let fake: Fake;
  let h: HostService['h'];
  let account: HostService['account'];
  let ns = '';
  let userToken = '';

  beforeAll(async () => {
    svc = await startHostService(host, 50);
    ({ fake, h, account } = svc);
    userToken = svc.user.token;
    fake.addUser('rita');
    ns = svc.user.login;
    // One repository, triggers on (CI follow-ups at their default, 2); each test opens its own pull requests.
    fake.createRepo(ns, 'calc', { files: CALC_REPO, collaborators: ['rita'] });
    const on = await h.app.inject({
      method: 'PUT',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(`${fake.webUrl}/${ns}/calc`)}`,
      headers: account.auth,
      payload: {},
    });
    expect(on.statusCode, on.body).toBe(201);
    expect(on.json().ci_rounds).toBe(2);
  });
  afterAll(async () => {
    await svc?.close();
  });

  let pulls = 0;
  const name = 'calc';

  /** Triggers' options on the repository (PUT /v1/me/repos/triggers). */
  async function setTriggers(options: { ci_rounds?: number }) {
    const put = await h.app.inject({
      method: 'PUT',
      url: `/v1/me/repos/triggers?repo=${encodeURIComponent(`${fake.webUrl}/${ns}/${name}`)}`,
      headers: account.auth,
      payload: options,
    });
    expect(put.statusCode, put.body).toBeLessThan(300);
    return put.json();
  }

  /** A pull request emend opened on the repository: a task carrying its URL, its branch named as the pr step names it. */
  async function emendPull() {
    const repoUrl = `${fake.webUrl}/${ns}/${name}`;
    const [trigger] = await h.deps.db.select().from(repoTriggers).where(eq(repoTriggers.repoName, name));
    const opener = { id: newId(), prompt: `fix add so that add(2, 3) is 5, take ${++pulls}` };
    const branch = branchName(opener);
    fake.commit(ns, name, { branch, from: 'main', files: { 'calc/ops.py': 'def add(a, b):\n    return a - b\n' } });
    const client = hostFor(h.deps, hostById(h.deps.config, host.kind)!, userToken);
    const pull = await client.openPull({
      ...{ owner: ns, name, branch, base: 'main', title: 'Fix add', body: 'Closes #1.', draft: false },
    });
    await h.deps.db.insert(tasks).values({
      ...{ id: opener.id, workspaceId: account.workspace.id, taskType: 'fix', mode: 'pr', status: 'done' },
      ...{ prompt: opener.prompt, repoUrl, repoOwner: ns, repoName: name, prUrl: pull.url, createdAt: h.clock.now() },
    });
    return { name, repoUrl, branch, pull: pull.number, opener: opener.id, trigger: trigger! };
  }

  type Pr = Awaited<ReturnType<typeof emendPull>>;

  /** The deliveries of the trigger once every one has been acted on (or ignored at once). */
  async function settled(pr: Pr, count: number) {
    return waitFor(
      `${count} deliveries acted on`,
      async () => {
        const rows = await h.deps.db
          .select()
          .from(triggerDeliveries)
          .where(eq(triggerDeliveries.triggerId, pr.trigger.id));
        return rows.length >= count && rows.every((d) => d.status !== 'received' && d.status !== 'acting')
          ? rows
          : undefined;
      },
      WAIT_MS,
    );
  }
  const deliveries = (pr: Pr) =>
    h.deps.db.select().from(triggerDeliveries).where(eq(triggerDeliveries.triggerId, pr.trigger.id));

  /** The follow-ups of the pull request, oldest first. */
  const followUps = (pr: Pr) =>
    h.deps.db
      .select()
      .from(tasks)
      .where(and(eq(tasks.parentId, pr.opener), isNotNull(tasks.trigger)))
      .orderBy(tasks.createdAt);

  /** CI reported on the branch's head; every delivery acted on; what the host heard back. */
  async function report(pr: Pr, jobs: CiJobSpec[]) {
    const before = (await deliveries(pr)).length;
    const sent = await fake.reportCi(ns, pr.name, { branch: pr.branch, jobs });
    expect(sent.answers.length).toBeGreaterThan(0);
    for (const a of sent.answers) expect([200, 202], a.body).toContain(a.status);
    await settled(pr, before + sent.answers.length);
    return sent;
  }

  /** The round's run ends and its push lands: the task done, a new commit on the branch. */
  async function roundPushed(pr: Pr, taskId: string, file: string) {
    await forceStatus(h, eq(tasks.id, taskId), 'done');
    fake.commit(ns, pr.name, { branch: pr.branch, files: { [file]: 'fixed\n' }, message: 'emend: fix CI' });
  }

  const emendsComments = (pr: Pr) =>
    fake.threadComments(ns, pr.name, { kind: 'pull', number: pr.pull }).filter((c) => c.body.includes(MARKER));

  it("a failing check starts one follow-up: a child on the pull request's branch, its prompt the job, step, log tail and failing test; the answer says what failed", async () => {
    const pr = await emendPull();
    await report(pr, [failing(host.kind), { name: 'lint', state: 'success' }]);
    const [follow, ...more] = await followUps(pr);
    expect(more).toEqual([]);
    expect(follow).toBeDefined();
    expect(follow!.baseBranch).toBe(pr.branch);
    expect(follow!.mode).toBe('pr');
    expect(follow!.trigger).toMatchObject({ kind: 'ci', thread: 'pull', number: pr.pull, host: host.kind });
    const ci = follow!.trigger!.ci!;
    expect(ci.round).toBe(1);
    expect(ci.jobs.map((j) => j.name)).toEqual(['test']);
    expect(ci.tests).toEqual(['tests/test_ops.py::test_add']);
    const step = host.kind === 'gitlab' ? 'test' : 'Run tests';
    expect(ci.jobs[0]!.step).toBe(step);
    const prompt = follow!.prompt;
    expect(prompt).toContain(`Follow-up on pull request #${pr.pull} (Fix add): its CI failed on`);
    expect(prompt).toContain(
      `- test (${{ github: 'GitHub Actions', gitlab: 'GitLab CI', gitea: 'Gitea Actions' }[host.kind]}): step "${step}"`,
    );
    expect(prompt).toContain('failing tests: tests/test_ops.py::test_add');
    expect(prompt).toContain('FAILED tests/test_ops.py::test_add - assert -1 == 5');
    expect(prompt).not.toContain('lint');
    // Cleaned: no escapes, no runner timestamps, no secret.
    expect(prompt).not.toContain('\x1b');
    expect(prompt).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect(prompt).not.toContain(SECRET_IN_LOG);
    expect(prompt).toContain('GH_TOKEN=[redacted]');
    // The API shows it, and one answer in the thread says what failed.
    const api = (await h.app.inject({ method: 'GET', url: `/v1/tasks/${follow!.id}`, headers: account.auth })).json();
    expect(api.task.trigger).toMatchObject({ kind: 'ci', ci: { round: 1, tests: ['tests/test_ops.py::test_add'] } });
    const [answer, ...others] = emendsComments(pr);
    expect(others).toEqual([]);
    expect(answer!.body).toContain('CI failed on');
    expect(answer!.body).toContain('`test`');
    expect(answer!.body).toContain(`/app/tasks/${follow!.id}`);
    const rows = await deliveries(pr);
    expect(rows.filter((d) => d.status === 'started').map((d) => d.taskId)).toEqual([follow!.id]);
  });

  it('a passing check starts nothing, nor a failing one on a pull request emend did not open', async () => {
    const pr = await emendPull();
    const passed = await report(pr, [{ name: 'test', state: 'success' }]);
    for (const a of passed.answers) expect(JSON.parse(a.body)).toMatchObject({ outcome: 'ignored' });
    expect(passed.answers.map((a) => JSON.parse(a.body).reason)).toContain('a passing check starts nothing');
    // Rita's own pull request on the same repository.
    fake.commit(ns, pr.name, { branch: 'rita/tweak', from: 'main', files: { 'NOTES.md': 'mine\n' } });
    const ritas = await hostFor(h.deps, hostById(h.deps.config, host.kind)!, fake.addUser('rita').token).openPull({
      ...{ owner: ns, name: pr.name, branch: 'rita/tweak', base: 'main', title: 'Tweak', body: '', draft: false },
    });
    const before = (await deliveries(pr)).length;
    const sent = await fake.reportCi(ns, pr.name, { branch: 'rita/tweak', jobs: [failing(host.kind)] });
    const rows = (await settled(pr, before + sent.answers.length)).slice(before);
    expect(rows.every((d) => d.status === 'ignored')).toBe(true);
    expect(rows.map((d) => d.reason)).toContain('not a pull request emend opened');
    expect(await followUps(pr)).toEqual([]);
    expect(fake.threadComments(ns, pr.name, { kind: 'pull', number: ritas.number })).toEqual([]);
  });

  it('two automatic rounds at most: the third failure is not acted on, and is said once in the thread', async () => {
    const pr = await emendPull();
    await report(pr, [failing(host.kind, 'test')]);
    const [first] = await followUps(pr);
    await roundPushed(pr, first!.id, 'one.txt');
    await report(pr, [{ name: 'test', state: 'success' }, failing(host.kind, 'lint')]);
    const [, second, ...more] = await followUps(pr);
    expect(more).toEqual([]);
    expect(second!.trigger!.ci).toMatchObject({ round: 2, jobs: [{ name: 'lint' }] });
    await roundPushed(pr, second!.id, 'two.txt');
    await report(pr, [
      { name: 'test', state: 'success' },
      { name: 'lint', state: 'success' },
      failing(host.kind, 'types'),
    ]);
    expect(await followUps(pr)).toHaveLength(2);
    const ended = emendsComments(pr).filter((c) => c.body.includes('automatic CI follow-ups'));
    expect(ended).toHaveLength(1);
    expect(ended[0]!.body).toContain('has made its 2 automatic CI follow-ups');
    expect(ended[0]!.body).toContain('`types`');
    // Nothing more is said or started for the pull request's later failures.
    fake.commit(ns, pr.name, { branch: pr.branch, files: { 'three.txt': 'x\n' } });
    await report(pr, [failing(host.kind, 'types')]);
    expect(await followUps(pr)).toHaveLength(2);
    expect(emendsComments(pr).filter((c) => c.body.includes('automatic CI follow-ups'))).toHaveLength(1);
  });

  it('the same failing job after a round ends the rounds with a comment; `@emend fix the CI` then asks for one by hand', async () => {
    const pr = await emendPull();
    await report(pr, [failing(host.kind)]);
    const [first] = await followUps(pr);
    await roundPushed(pr, first!.id, 'one.txt');
    await report(pr, [failing(host.kind)]);
    expect(await followUps(pr)).toHaveLength(1);
    const [again, ...more] = emendsComments(pr).filter((c) => c.body.includes('failed again'));
    expect(more).toEqual([]);
    expect(again!.body).toContain("`test` failed again after emend's follow-up");
    expect(again!.body).toContain('"fix the CI"');
    // Rita asks for a round by hand: the head's failing job, her request, her name on it.
    const asked = await fake.commentOn(
      ns,
      pr.name,
      { kind: 'pull', number: pr.pull },
      { author: 'rita', body: '@emend fix the CI, the adder subtracts' },
    );
    expect(asked.answers.map((a) => a.status)).toEqual([202]);
    const manual = await waitFor('the round asked for', async () => (await followUps(pr))[1], WAIT_MS);
    expect(manual.trigger).toMatchObject({ kind: 'ci', actor: 'rita', ci: { round: null, jobs: [{ name: 'test' }] } });
    expect(manual.prompt).toContain('Request: fix the CI, the adder subtracts');
    expect(manual.prompt).toContain('FAILED tests/test_ops.py::test_add');
    expect(manual.baseBranch).toBe(pr.branch);
  });

  it('a delivery with a bad signature is 401 and starts nothing; with CI follow-ups off a failure starts nothing', async () => {
    expect((await setTriggers({ ci_rounds: 0 })).ci_rounds).toBe(0);
    const off = await emendPull();
    const sent = await fake.reportCi(ns, off.name, { branch: off.branch, jobs: [failing(host.kind)] });
    const reasons = sent.answers.map((a) => JSON.parse(a.body).reason);
    expect(reasons).toContain('automatic CI follow-ups are off for the repository (ci_rounds 0)');
    expect(sent.answers.every((a) => a.status === 200)).toBe(true);
    expect(await followUps(off)).toEqual([]);
    expect((await setTriggers({ ci_rounds: 2 })).ci_rounds).toBe(2);

    // A delivery of a failing check, its proof forged: refused before anything is read or recorded.
    const pr = await emendPull();
    const at = fake.sent().length;
    await report(pr, [failing(host.kind)]);
    const [started] = await followUps(pr);
    const recorded = (await deliveries(pr)).length;
    const forged = Object.fromEntries(
      Object.entries(fake.sent()[at]!.headers)
        .filter(([k]) => /signature|token/i.test(k))
        .map(([k, v]) => [
          k,
          v.startsWith('sha256=') ? `sha256=${'0'.repeat(64)}` : /^[0-9a-f]{64}$/.test(v) ? '0'.repeat(64) : 'nope',
        ]),
    );
    expect(Object.keys(forged).length).toBeGreaterThan(0);
    const refused = await fake.resend(at, {
      ...forged,
      'x-github-delivery': randomUUID(),
      'x-gitea-delivery': randomUUID(),
      'idempotency-key': randomUUID(),
    });
    expect(refused.status).toBe(401);
    expect(await deliveries(pr)).toHaveLength(recorded);
    expect((await followUps(pr)).map((t) => t.id)).toEqual([started!.id]);
  });
});
