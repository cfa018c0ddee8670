import { describe, expect, it } from 'vitest';
import type { TaskTriggerCi } from '../../src/db/schema.js';
import { HOST_KINDS } from '../../src/scm/kinds.js';
import type { HostEvent } from '../../src/scm/host-events.js';
import type { ValidatorOutput } from '../../src/step-contract/index.js';
import { PROMPT_LIMITS } from '../../src/tasks/service.js';
import { TAIL_CHARS, TAIL_LINES, clipLog, redactSecrets } from '../../src/triggers/ci-log.js';
import { ciReproduction } from '../../src/triggers/ci-reproduction.js';
import { asksForCi, decide } from '../../src/triggers/decide.js';
import { answerText } from '../../src/triggers/answer.js';
import type { Task } from '../../src/tasks/task.js';
import { ciPrompt } from '../../src/triggers/prompt.js';

/**
 * The parts of CI follow-ups that need no host (docs/triggers.md, "CI follow-ups"): what each
 * host's CI delivery reads as, what the decision makes of it, a log clipped to its failing step
 * (escapes, timestamps and secrets out, a bounded tail, the failing tests), the prompt within the
 * task's limit, and what the answer says about the sandbox reproducing the failure.
 */

const trigger = {
  mention: '@emend',
  label: 'emend',
  events: ['comments', 'labels', 'reviews'],
  repoOwner: 'acme',
  repoName: 'calc',
  ciRounds: 2,
};
const repository = { name: 'calc', owner: { login: 'acme' } };
const sender = { login: 'octo', id: 9 };
const SHA = 'a1b2c3d4e5f60718293a4b5c6d7e8f9012345678';

const read = (kind: 'github' | 'gitlab' | 'gitea', event: string, payload: object) =>
  HOST_KINDS[kind].readEvent(event, payload);

describe('CI deliveries in emend’s words', () => {
  it('GitHub: a check suite and a check run name their pull requests; a status names its branch', () => {
    expect(
      read('github', 'check_suite', {
        action: 'completed',
        check_suite: {
          ...{ id: 5, head_sha: SHA, head_branch: 'emend/1-fix', status: 'completed', conclusion: 'failure' },
          pull_requests: [{ number: 7 }],
          app: { name: 'GitHub Actions' },
        },
        repository,
        sender,
      }),
    ).toEqual({
      kind: 'ci',
      repo: { owner: 'acme', name: 'calc' },
      actor: { login: 'octo', id: 9 },
      ci: { sha: SHA, state: 'failed', name: 'check suite 5 (GitHub Actions)', pulls: [7], branch: 'emend/1-fix' },
    });
    const run = read('github', 'check_run', {
      action: 'created',
      check_run: { id: 6, name: 'test', head_sha: SHA, status: 'in_progress', conclusion: null, pull_requests: [] },
      repository,
      sender,
    });
    expect(run).toMatchObject({ kind: 'ci', ci: { state: 'pending', name: 'test', pulls: [] } });
    expect(
      read('github', 'status', {
        ...{ sha: SHA, state: 'error', context: 'ci/jenkins', target_url: 'https://ci/1' },
        branches: [{ name: 'emend/1-fix' }],
        repository,
        sender,
      }),
    ).toMatchObject({
      ci: { state: 'failed', name: 'ci/jenkins', pulls: [], branch: 'emend/1-fix', url: 'https://ci/1' },
    });
    expect(read('github', 'check_run', { action: 'completed', repository, sender })).toEqual({
      ignored: 'the payload has no check_run',
    });
  });

  it('GitLab: a pipeline names its merge request, or its branch; a cancelled one is its own state', () => {
    const pipeline = (mr: object | null, status: string, ref = 'emend/1-fix') => ({
      object_kind: 'pipeline',
      object_attributes: { id: 31, sha: SHA, ref, status },
      merge_request: mr,
      project: { path_with_namespace: 'group/sub/calc', web_url: 'https://gl/group/sub/calc' },
      user: { username: 'octo', id: 9 },
    });
    expect(
      read(
        'gitlab',
        'Pipeline Hook',
        pipeline({ iid: 4, source_branch: 'emend/1-fix' }, 'failed', 'refs/merge-requests/4/head'),
      ),
    ).toEqual({
      kind: 'ci',
      repo: { owner: 'group/sub', name: 'calc' },
      actor: { login: 'octo', id: 9 },
      ci: {
        sha: SHA,
        state: 'failed',
        name: 'pipeline 31',
        pulls: [4],
        branch: 'emend/1-fix',
        url: 'https://gl/group/sub/calc/-/pipelines/31',
      },
    });
    expect(read('gitlab', 'Pipeline Hook', pipeline(null, 'success'))).toMatchObject({
      ci: { state: 'passed', pulls: [], branch: 'emend/1-fix' },
    });
    expect(read('gitlab', 'Pipeline Hook', pipeline(null, 'canceled'))).toMatchObject({ ci: { state: 'cancelled' } });
  });

  it('Gitea: a status names no pull request nor branch; a workflow job and run name the pull request they ran for', () => {
    expect(
      read('gitea', 'status', { sha: SHA, state: 'failure', context: 'CI / test (push)', repository, sender }),
    ).toMatchObject({ ci: { sha: SHA, state: 'failed', name: 'CI / test (push)', pulls: [] } });
    const job = {
      id: 3,
      name: 'test',
      head_sha: SHA,
      head_branch: 'emend/1-fix',
      status: 'completed',
      conclusion: 'failure',
    };
    expect(
      read('gitea', 'workflow_job', {
        action: 'completed',
        workflow_job: job,
        pull_request: { number: 7 },
        repository,
        sender,
      }),
    ).toMatchObject({ ci: { state: 'failed', name: 'test', pulls: [7], branch: 'emend/1-fix' } });
    expect(
      read('gitea', 'workflow_run', {
        action: 'in_progress',
        workflow_run: { ...job, conclusion: null, status: 'in_progress', name: 'CI' },
        repository,
        sender,
      }),
    ).toMatchObject({ ci: { state: 'pending', name: 'CI', pulls: [] } });
  });
});

describe('what a CI delivery decides', () => {
  const ci = (state: 'pending' | 'passed' | 'failed' | 'cancelled'): HostEvent => ({
    kind: 'ci',
    repo: { owner: 'acme', name: 'calc' },
    actor: sender,
    ci: { sha: SHA, state, name: 'test', pulls: [7] },
  });

  it('a failure asks for a round; anything else starts nothing, and neither does a failure with the rounds off', () => {
    expect(decide(trigger, ci('failed'))).toEqual({ act: 'ci_round', manual: false, request: '' });
    expect(decide(trigger, ci('passed'))).toEqual({ ignored: 'a passing check starts nothing' });
    expect(decide(trigger, ci('pending'))).toEqual({ ignored: 'a check still running starts nothing' });
    expect(decide(trigger, ci('cancelled'))).toEqual({ ignored: 'a cancelled check starts nothing' });
    expect(decide({ ...trigger, ciRounds: 0 }, ci('failed'))).toEqual({
      ignored: 'automatic CI follow-ups are off for the repository (ci_rounds 0)',
    });
    expect(decide(trigger, { ...ci('failed'), repo: { owner: 'acme', name: 'other' } })).toEqual({
      ignored: 'the delivery is about acme/other, not acme/calc',
    });
  });

  it('"@emend fix the CI" on a pull request asks for a round by hand, even with the automatic ones off', () => {
    const on = (body: string, kind: 'issue' | 'pull' = 'pull'): HostEvent => ({
      kind: 'comment',
      action: 'created',
      repo: { owner: 'acme', name: 'calc' },
      actor: sender,
      thread: { kind, number: 7, title: 'Fix add', body: '', url: 'https://h/acme/calc/pull/7' },
      comment: { id: '1', body, url: 'https://h/acme/calc/pull/7#c1' },
    });
    expect(decide({ ...trigger, ciRounds: 0 }, on('@emend fix the CI please'))).toEqual({
      act: 'ci_round',
      manual: true,
      request: 'fix the CI please',
    });
    expect(decide(trigger, on('@emend, please fix the build'))).toMatchObject({ act: 'ci_round' });
    expect(decide(trigger, on('@emend rename fixCI to fix'))).toMatchObject({ act: 'follow_up' });
    expect(decide(trigger, on('@emend fix the CI', 'issue'))).toMatchObject({ act: 'issue_task' });
    for (const ask of ['fix the CI', 'Fix CI', 'repair the checks', 'fix the pipeline: lint fails'])
      expect(asksForCi(ask), ask).toBe(true);
    for (const ask of ['fix the circle', 'fix add', 'the CI is fine']) expect(asksForCi(ask), ask).toBe(false);
  });
});

describe('a failing job’s log, clipped', () => {
  const stamp = (line: string, i: number) => `2026-05-01T10:00:${String(i).padStart(2, '0')}.1234567Z ${line}`;

  it('GitHub Actions: the failing step from its group to the error, escapes, timestamps and secrets out', () => {
    const log = [
      '##[group]Run actions/checkout@v4',
      'Fetching the repository',
      '##[endgroup]',
      '##[group]Run npm test',
      'npm test',
      '##[endgroup]',
      '\x1b[31m FAIL \x1b[39m test/add.test.ts > add > adds two numbers',
      '##[error]AssertionError: expected -1 to be 5',
      `curl -H "Authorization: Bearer abcdefghijklmnop1234" https://x:hunter2pass@registry.example/`,
      'npm_config_password=s3cr3tvalue',
      ' Test Files  1 failed (1)',
      '##[error]Process completed with exit code 1.',
      '##[group]Post job cleanup',
      'Cleaning up',
    ].map(stamp);
    const clipped = clipLog(log.join('\n'), ['hunter2pass']);
    expect(clipped.step).toBe('Run npm test');
    expect(clipped.tail.split('\n')[0]).toBe('npm test');
    expect(clipped.tail).toContain('FAIL  test/add.test.ts > add > adds two numbers');
    expect(clipped.tail).toContain('##[error]Process completed with exit code 1.');
    expect(clipped.tail).not.toContain('checkout');
    expect(clipped.tail).not.toContain('Cleaning up');
    expect(clipped.tail).not.toContain('\x1b');
    expect(clipped.tail).not.toContain('2026-05-01T');
    expect(clipped.tail).not.toMatch(/abcdefghijklmnop1234|hunter2pass|s3cr3tvalue/);
    expect(clipped.tail).toContain('Bearer [redacted]');
    expect(clipped.tests).toEqual(['test/add.test.ts > add > adds two numbers']);
  });

  it("GitLab: the script section, the overwritten text of a carriage return dropped, and the job's end", () => {
    const log = [
      'section_start:1700000000:prepare_executor\r\x1b[0KPreparing the "docker" executor',
      'Pulling docker image python:3.12 ...',
      'section_end:1700000001:prepare_executor\r\x1b[0K',
      'section_start:1700000002:step_script\r\x1b[0KExecuting "step_script" stage of the job script',
      '$ pytest -q',
      'Downloading 10%\rDownloading 100%',
      'FAILED tests/test_ops.py::test_add - assert -1 == 5',
      '1 failed, 3 passed in 0.12s',
      'section_end:1700000009:step_script\r\x1b[0K',
      'section_start:1700000010:upload_artifacts_on_failure\r\x1b[0KUploading artifacts',
      'section_end:1700000011:upload_artifacts_on_failure\r\x1b[0K',
      '\x1b[31;1mERROR: Job failed: exit code 1\x1b[0;m',
    ];
    const clipped = clipLog(log.join('\n'));
    expect(clipped.step).toBe('script');
    expect(clipped.tail).not.toContain('Pulling docker image');
    expect(clipped.tail).not.toContain('Uploading artifacts');
    expect(clipped.tail).not.toContain('Downloading 10%');
    expect(clipped.tail).toContain('Downloading 100%');
    expect(clipped.tail.split('\n').at(-1)).toBe('ERROR: Job failed: exit code 1');
    expect(clipped.tests).toEqual(['tests/test_ops.py::test_add']);
  });

  it(`a long log keeps its end: at most ${TAIL_LINES} lines and ${TAIL_CHARS} characters; one without steps is read whole`, () => {
    const lines = Array.from({ length: 500 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    const clipped = clipLog(lines.join('\n'));
    const kept = clipped.tail.split('\n');
    expect(kept.length).toBeLessThanOrEqual(TAIL_LINES);
    expect(clipped.tail.length).toBeLessThanOrEqual(TAIL_CHARS);
    expect(kept.at(-1)).toBe(lines.at(-1));
    expect(clipped.step).toBeUndefined();
    const one = clipLog('y'.repeat(5000));
    expect(one.tail.length).toBeLessThanOrEqual(TAIL_CHARS);
    expect(one.tail.startsWith('…')).toBe(true);
  });

  it('takes out what looks like a secret, and the values it is told of', () => {
    const text = [
      `token ghp_${'a'.repeat(36)}`,
      `glpat-${'b'.repeat(20)}`,
      'AKIAABCDEFGHIJKLMNOP',
      `sk-proj-${'c'.repeat(30)}`,
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----',
      'API_KEY: "abcd1234efgh"',
      'the plain value my-own-token-value',
    ].join('\n');
    const out = redactSecrets(text, ['my-own-token-value']);
    for (const secret of [
      'aaaaaaaa',
      'bbbbbbbb',
      'AKIAABCDEFGHIJKLMNOP',
      'cccccccc',
      'MIIEow',
      'abcd1234efgh',
      'my-own-token-value',
    ])
      expect(out).not.toContain(secret);
  });
});

describe('the CI follow-up’s prompt', () => {
  it('says what failed first, the request, then the logs sharing what is left, within the prompt limit', () => {
    const tail = Array.from({ length: 40 }, (_, i) => `output line ${i} ${'z'.repeat(20)}`).join('\n');
    const job = (name: string) => ({
      name,
      source: 'GitHub Actions',
      step: 'Run npm test',
      url: `https://h/acme/calc/actions/runs/1/job/${name}`,
      tail,
      tests: ['test/a.test.ts > a > works'],
    });
    const prompt = ciPrompt(
      { number: 7, title: 'Fix add' },
      SHA,
      [
        job('test'),
        job('lint'),
        { ...job('jenkins'), source: 'a commit status', tail: null, tests: [], step: undefined },
      ],
      'fix the CI, the lint too',
    );
    expect([...prompt].length).toBeLessThanOrEqual(PROMPT_LIMITS.max);
    expect(prompt.startsWith('Follow-up on pull request #7 (Fix add): its CI failed on a1b2c3d.')).toBe(true);
    expect(prompt).toContain('- test (GitHub Actions): step "Run npm test"; failing tests: test/a.test.ts > a > works');
    expect(prompt).toContain('- jenkins (a commit status)');
    expect(prompt).toContain('Request: fix the CI, the lint too');
    expect(prompt).toContain('jenkins: no log through the API (https://h/acme/calc/actions/runs/1/job/jenkins)');
    expect(prompt).toContain('Log of test, its end:');
    expect(prompt).toContain('Log of lint, its end:');
    // Each log keeps its end.
    expect(prompt.match(/output line 39/g)).toHaveLength(2);
  });
});

describe('what the answer says about the sandbox', () => {
  const ci: TaskTriggerCi = {
    sha: SHA,
    jobs: [{ name: 'test', step: 'Run tests' }],
    tests: ['tests/test_ops.py::test_add'],
    round: 1,
  };
  const validator = (over: Partial<ValidatorOutput>): ValidatorOutput => ({
    command: 'pytest',
    setup: null,
    passed: true,
    new_failures: [],
    fixed: [],
    preexisting_failures: [],
    duration_ms: 10,
    log_tail: '',
    ...over,
  });

  it('reproduced: failing in the sandbox before the change, passing after', () => {
    expect(ciReproduction(ci, validator({ fixed: ['tests/test_ops.py::test_add'] }))).toBe(
      'The sandbox reproduced the failure: tests/test_ops.py::test_add failed there before the change and passes now.',
    );
  });

  it('not reproduced, said: the test passed in the sandbox before the change, or no test was named, or none ran', () => {
    expect(ciReproduction(ci, validator({}))).toContain(
      'The sandbox could not reproduce the failure of tests/test_ops.py::test_add (it passed there before the change): the change is untested until CI runs again.',
    );
    expect(ciReproduction({ ...ci, tests: [] }, validator({}))).toContain('names no failing test');
    expect(ciReproduction(ci, validator({ command: null, passed: null }))).toContain('The sandbox ran no tests for it');
    expect(ciReproduction(ci, undefined)).toContain('not reproduced here');
    expect(
      ciReproduction(ci, validator({ preexisting_failures: ['tests/test_ops.py::test_add'], passed: true })),
    ).toContain('still fails in the sandbox');
  });
});

describe('the CI follow-up’s answer in the pull request', () => {
  const config = { baseUrl: 'https://emend.example' };
  const task = (status: Task['status'], validator?: object) =>
    ({
      id: '0190f0e0-0000-7000-8000-000000000001',
      status,
      error: status === 'failed' ? 'the branch moved while emend worked.' : null,
      prUrl: 'https://h/acme/calc/pull/7',
      progress: validator ? { outputs: { validator }, next: 'end' } : {},
      trigger: {
        ...{ host: 'github', kind: 'ci', thread: 'pull', number: 7, commentUrl: 'https://h/job/1', actor: 'octo' },
        triggerId: '0190f0e0-0000-7000-8000-000000000002',
        ci: { sha: SHA, jobs: [{ name: 'test', step: 'Run tests' }], tests: ['tests/test_ops.py::test_add'], round: 2 },
      },
    }) as unknown as Task;

  it('while it works, what failed and the round; once pushed, whether the sandbox reproduced it', () => {
    expect(answerText(config, task('running'))).toBe(
      'CI failed on a1b2c3d: `test` (step `Run tests`); automatic round 2. emend is working on a fix: ' +
        'https://emend.example/app/tasks/0190f0e0-0000-7000-8000-000000000001',
    );
    const validator = {
      command: 'pytest',
      setup: null,
      passed: true,
      new_failures: [],
      fixed: ['tests/test_ops.py::test_add'],
      preexisting_failures: [],
      duration_ms: 10,
      log_tail: '',
    };
    const done = answerText(config, task('done', validator));
    expect(done).toContain('emend pushed a fix for the failing CI to this pull request');
    expect(done).toContain(
      'The sandbox reproduced the failure: tests/test_ops.py::test_add failed there before the change',
    );
    expect(answerText(config, task('done'))).toContain('so the CI failure was not reproduced here');
    expect(answerText(config, task('failed'))).toContain(
      'emend could not finish: the branch moved while emend worked.',
    );
  });
});
