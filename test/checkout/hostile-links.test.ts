import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_RANKING, CALC_REPO, editBlock, scriptCalcRun, stepOf } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, runFixTask, startModelService } from '../support/model-service.js';
import { BAKERY_BRIEF, ORDER_PAGE, SITE_WITH_BROKEN_LINK, scriptSiteRun } from '../support/site-script.js';
import { mustOpen, openSse } from '../support/sse-client.js';

// A repository is hostile input. This one links to the data dir's secret key (relative and
// absolute), /etc/passwd, the service's own /proc/self/environ (also as its .emend/test, which
// would become the test command), a directory outside, and through a chain of links that stay
// inside for two hops. Demo, preview, pr and scaffold tasks run through the real pipeline; not a
// byte of those files may reach the model, the logs, the SSE stream, the diff or the PR. Links
// that stay inside keep working, for reading and for edits.

const SECRET_MARKER = 'data-dir-secret-key-9f3e61c0d2';
const OUTSIDE_MARKER = 'outside-directory-marker-5b7a';
const PASSWD_MARKER = 'root:x:0:0';

/** Entries of this process's environment as /proc/self/environ shows them (the worker runs in this process). */
function environMarkers(): string[] {
  return readFileSync('/proc/self/environ', 'utf8')
    .split('\0')
    .filter((e) => /^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_=/.:,+-]{16,}$/.test(e));
}

let svc: ModelService;
let baseUrl: string;
let outside: string;
let repoUrl: string;

const HOSTILE_EDITS = [
  'Updating the readme and notes as well.',
  editBlock('# calc', '# calc (patched)', 'README.md'),
  editBlock('', 'written outside', 'ext-docs/new.md'),
  editBlock('x', 'y', 'CHANGES.md'),
  editBlock('root', 'toor', '/etc/passwd'),
  editBlock('', 'k', '../../../secret.key'),
].join('\n');

/** Through links that stay inside: a file link (calc/alias.py -> ops.py) and a directory link (lib -> calc). */
const INSIDE_EDITS = [
  'Fixing add through its alias.',
  editBlock('    return a - b', '    return a + b', 'calc/alias.py'),
  editBlock('    return s.upper() + "!"', '    return s.upper() + "!!"', 'lib/text.py'),
].join('\n');

function scriptHostileRun(model: ModelService['model']) {
  scriptCalcRun(
    model,
    [HOSTILE_EDITS, INSIDE_EDITS],
    [...CALC_RANKING, { path: 'calc/alias.py', reason: 'the same module, linked' }],
  );
}

beforeAll(async () => {
  svc = await startModelService();
  baseUrl = await svc.h.app.listen({ host: '127.0.0.1', port: 0 });
  const dataDir = svc.h.deps.config.dataDir;
  // the embedded default keeps the key in the data dir; the tests' harness passes it in the environment instead
  writeFileSync(join(dataDir, 'secret.key'), `${SECRET_MARKER}\n`);
  outside = mkdtempSync(join(tmpdir(), 'emend-outside-'));
  writeFileSync(join(outside, 'notes.md'), `${OUTSIDE_MARKER}\n`);
  writeFileSync(join(outside, 'test_outside.py'), `# ${OUTSIDE_MARKER}\nimport pytest\n`);
  const { 'README.md': _readme, ...files } = CALC_REPO;
  svc.h.github.createRepo('acme', 'calc', {
    files: { ...files, 'docs/guide.md': '# Guide\n\nadd() and mul() live in calc/ops.py.\n' },
    links: {
      // a task's checkout is <data>/work/<task>/tree: three levels up is the data dir
      'README.md': '../../../secret.key',
      'SECRET.md': join(dataDir, 'secret.key'),
      'passwd.txt': '/etc/passwd',
      'environ.txt': '/proc/self/environ',
      '.emend/test': '/proc/self/environ',
      'ext-docs': outside,
      // inside -> inside -> outside
      'CHANGES.md': 'docs/changes.md',
      'docs/changes.md': '../passwd.txt',
      // links that stay inside
      'calc/alias.py': 'ops.py',
      lib: 'calc',
    },
  });
  repoUrl = `${svc.h.github.webUrl}/acme/calc`;
});

afterAll(async () => {
  await svc?.close();
  if (outside) rmSync(outside, { recursive: true, force: true });
});

/** Everything the outside world and the account saw of a task, as one string. */
async function everythingSeen(id: string, auth: Record<string, string>): Promise<{ text: string; sse: string }> {
  const stream = mustOpen(
    await openSse(`${baseUrl}/v1/tasks/${id}/logs/stream`, { headers: { ...auth, 'last-event-id': '0' } }),
  );
  await stream.waitFor((i) => i.kind === 'event' && i.event === 'end', 30_000);
  await stream.closed;
  const sse = JSON.stringify(stream.items);
  const task = await (await fetch(`${baseUrl}/v1/tasks/${id}`, { headers: auth })).text();
  const { model, h } = svc;
  return {
    text: [JSON.stringify(model.requests), JSON.stringify(model.calls), h.logLines.join('\n'), task, sse].join('\n'),
    sse,
  };
}

function expectNoOutsideBytes(seen: string) {
  const environ = environMarkers();
  expect(environ.length).toBeGreaterThan(2);
  expect(seen).not.toContain(SECRET_MARKER);
  expect(seen).not.toContain(OUTSIDE_MARKER);
  expect(seen).not.toContain(PASSWD_MARKER);
  for (const entry of environ) expect(seen, 'an entry of /proc/self/environ').not.toContain(entry);
}

describe('a repository whose symlinks lead out of the checkout', { timeout: 180_000 }, () => {
  it('demo token: the planner sees the README as a link, the locator and inspector read only inside files', async () => {
    const { h, model } = svc;
    scriptHostileRun(model);
    const demo = await h.app.inject({
      method: 'POST',
      url: '/v1/demo/token',
      payload: { email: 'visitor@example.com' },
    });
    expect(demo.statusCode, demo.body).toBe(201);
    const auth = { authorization: `Bearer ${demo.json().token}` };
    const { task, logs, byStep } = await runFixTask(h, auth, repoUrl, 'done');
    expect(logs.map((l) => `${l.step}:${l.status}`)).toEqual([
      'planner:done',
      'locator:done',
      'inspector:done',
      'fixer:skipped',
      'validator:skipped',
      'pr:skipped',
    ]);
    const planner = model.calls.filter((c) => stepOf(c) === 'planner').at(-1)!;
    expect(planner.text).toContain('README.md: symlink -> ../../../secret.key');
    // .emend/test links to /proc/self/environ: read as absent, so the command is the detected one
    expect(planner.text).toContain('Test command: python3 -m pytest');
    // links out are no candidates; a link that stays inside is one, and is read
    const located = (byStep('locator')[0]!.output.files as { path: string }[]).map((f) => f.path);
    expect(located).toContain('calc/alias.py');
    for (const p of ['README.md', 'SECRET.md', 'passwd.txt', 'environ.txt', 'CHANGES.md', 'docs/changes.md'])
      expect(located).not.toContain(p);
    expect(located.some((p) => p.startsWith('ext-docs/'))).toBe(false);
    const inspector = model.calls.filter((c) => stepOf(c) === 'inspector').at(-1)!;
    expect(inspector.text).toContain(
      '## calc/alias.py (8 lines)\n```\n    1| def add(a, b):\n    2|     """Return the sum of a and ' +
        'b."""\n    3|     return a - b\n',
    );
    expectNoOutsideBytes((await everythingSeen(task.id, auth)).text);
  });

  it(
    'preview: edits through links out are refused and the reasons go back to the model; edits through inside ' +
      'links land',
    async () => {
      const { h, model } = svc;
      scriptHostileRun(model);
      const { auth } = await newAccount(h, { plan: 'free' });
      const { task, logs, byStep } = await runFixTask(h, auth, repoUrl, 'done');
      expect(logs.map((l) => `${l.step}:${l.status}`)).toEqual([
        'planner:done',
        'locator:done',
        'inspector:done',
        'fixer:done',
        'validator:done',
        'pr:skipped',
      ]);
      const fixerCalls = model.calls.filter((c) => stepOf(c) === 'fixer');
      const feedback = fixerCalls.at(-1)!.text;
      expect(feedback).toContain(
        'README.md: README.md is a symlink -> ../../../secret.key, which leads outside the repository; it is not ' +
          'followed, so it cannot be edited',
      );
      expect(feedback).toContain(
        `ext-docs/new.md: ext-docs is a symlink -> ${outside}, which leads outside the repository`,
      );
      expect(feedback).toContain(
        'CHANGES.md: CHANGES.md is a symlink -> docs/changes.md, which leads outside the repository',
      );
      expect(feedback).toContain('/etc/passwd: absolute paths are refused');
      expect(feedback).toContain('../../../secret.key: ".." is refused in paths');
      const fixer = byStep('fixer')[0]!.output;
      expect(fixer.files_changed).toEqual([
        { path: 'calc/alias.py', kind: 'modified' },
        { path: 'lib/text.py', kind: 'modified' },
      ]);
      // the edits landed in the link targets; the links are as they were
      expect(fixer.diff).toContain('--- a/calc/ops.py\n+++ b/calc/ops.py');
      expect(fixer.diff).toContain('+    return a + b');
      expect(fixer.diff).toContain('--- a/calc/text.py\n+++ b/calc/text.py');
      expect(fixer.diff).not.toMatch(/README\.md|alias\.py|ext-docs|secret/);
      expect(byStep('validator')[0]!.output).toMatchObject({
        passed: true,
        fixed: ['tests/test_ops.py::test_add'],
        command: expect.stringMatching(/^python3 -m pytest/),
      });
      // the secret key and the outside directory are untouched
      expect(readFileSync(join(h.deps.config.dataDir, 'secret.key'), 'utf8')).toBe(`${SECRET_MARKER}\n`);
      expect(readFileSync(join(outside, 'notes.md'), 'utf8')).toBe(`${OUTSIDE_MARKER}\n`);
      expect(() => readFileSync(join(outside, 'new.md'))).toThrow();
      expectNoOutsideBytes([(await everythingSeen(task.id, auth)).text, task.diff_summary].join('\n'));
    },
  );

  it('pr: the pull request holds the fix and none of the outside files', async () => {
    const { h, model } = svc;
    scriptHostileRun(model);
    const owner = await newAccount(h, { plan: 'pro', credits: 2 });
    const { task, byStep } = await runFixTask(h, owner.auth, repoUrl, 'done');
    expect(task.pr_url).toMatch(/\/acme\/calc\/pull\/\d+$/);
    const pull = h.github.pulls('acme', 'calc').find((p) => task.pr_url.endsWith(`/pull/${p.number}`))!;
    // the account is no collaborator: the branch is on its fork
    const head = h.github.files(pull.head.owner, pull.head.repo, pull.head.ref);
    expect(head['calc/ops.py']).toContain('return a + b');
    // the links are pushed as the links they are (git stores the target text), never as the files they point at
    expect(head['README.md']).toBe('../../../secret.key');
    const prDiff = h.github.diff(pull.head.owner, pull.head.repo, 'main', pull.head.ref);
    expect(prDiff).toContain('+    return a + b');
    expect(byStep('pr')[0]!.status).toBe('done');
    expectNoOutsideBytes(
      [(await everythingSeen(task.id, owner.auth)).text, JSON.stringify(pull), JSON.stringify(head), prDiff].join('\n'),
    );
  });
});

describe('a scaffold task whose model tries to write and read outside its site', { timeout: 180_000 }, () => {
  it('refuses paths out of the site directory, says why, and builds the site', async () => {
    const { h, model } = svc;
    const hostile = [
      SITE_WITH_BROKEN_LINK,
      editBlock('', 'x', '../../../secret.key'),
      editBlock('', 'x', `${h.deps.config.dataDir}/secret.key`),
      editBlock('root', 'toor', '/etc/passwd'),
      editBlock('', 'x', '../tree/README.md'),
      editBlock('', 'x', '.git/hooks/post-commit'),
    ].join('\n');
    const earlier = model.calls.length;
    scriptSiteRun(model, [hostile, ORDER_PAGE]);
    const fixerCalls = () => model.calls.slice(earlier).filter((c) => stepOf(c) === 'fixer');
    const owner = await newAccount(h, { plan: 'free' });
    const { task, byStep } = await runFixTask(h, owner.auth, '', 'done', {
      task_type: 'scaffold',
      prompt: BAKERY_BRIEF,
      repo_url: undefined,
    });
    const feedback = fixerCalls()[1]!.text;
    expect(feedback).toContain('../../../secret.key: ".." is refused in paths');
    expect(feedback).toContain(`${h.deps.config.dataDir}/secret.key: absolute paths are refused`);
    expect(feedback).toContain('/etc/passwd: absolute paths are refused');
    expect(feedback).toContain('../tree/README.md: ".." is refused in paths');
    expect(feedback).toContain('.git/hooks/post-commit: paths inside .git are refused');
    const files = (byStep('fixer').at(-1)!.output.files as { path: string }[]).map((f) => f.path);
    expect(files).toEqual(['index.html', 'loaf.svg', 'order.html', 'styles.css']);
    expect(readFileSync(join(h.deps.config.dataDir, 'secret.key'), 'utf8')).toBe(`${SECRET_MARKER}\n`);
    expectNoOutsideBytes((await everythingSeen(task.id, owner.auth)).text);
  });
});
