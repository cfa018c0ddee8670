import { describe, expect, it } from 'vitest';
import { taskLogs } from '../../src/db/schema.js';
import { newAccount, startHarness } from '../support/harness.js';
import { fixerOutput, validatorOutput } from '../support/step-outputs.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/** The panel's step views in Chromium: a step it has no view of its own for gets a generic one. */
const panel = servePanel(async () => {
  const h = await startHarness();
  h.github.createRepo('psf', 'requests');
  return h;
});

/** A task of a new account, and a maker of its log's rows (no worker runs here: the test writes them). */
async function newTask() {
  const owner = await newAccount(panel.h, { plan: 'pro', credits: 3 });
  const created = await panel.h.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: owner.auth,
    payload: { prompt: 'fix the bug', repo_url: 'https://github.com/psf/requests' },
  });
  expect(created.statusCode, created.body).toBe(201);
  const id: string = created.json().id;
  const log = (step: string, output: Record<string, unknown>) => ({
    taskId: id,
    step,
    status: 'done',
    output,
    createdAt: panel.h.clock.now(),
  });
  return { owner, id, log };
}

describe.skipIf(!haveChromium)('the control panel: step views', { timeout: 120_000 }, () => {
  it('shows a step it has no view for, in the log’s order, with the fields of its output', async () => {
    const { owner, id, log } = await newTask();
    // No worker runs here: the log is written as a run with a step added after the fixer would write it.
    const diff = '--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
    await panel.h.deps.db
      .insert(taskLogs)
      .values([
        log('fixer', fixerOutput(diff)),
        log('checker', { checked_files: 1, verdict: true, notes: 'first line\nsecond line', found: ['a.py', 'b.py'] }),
      ]);

    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.goto(`/app/tasks/${id}`);
    const checker = page.locator('.steps li[data-step="checker"]');
    await checker.locator('.generic').waitFor();
    expect(await checker.locator('h3').innerText()).toContain('Checker');
    // A field per line (jsonb keeps its own order of keys), each value as its shape calls for.
    const names = await checker.locator('.generic dt').allInnerTexts();
    const values = await checker.locator('.generic dd').allInnerTexts();
    expect(Object.fromEntries(names.map((n, i) => [n, values[i]]))).toEqual({
      'Checked files': '1',
      Verdict: 'true',
      Notes: 'first line\nsecond line',
      Found: 'a.py, b.py',
    });
    expect(
      await page.locator('.steps > li').evaluateAll((items) => items.map((li) => li.getAttribute('data-step'))),
    ).toEqual(['planner', 'locator', 'inspector', 'fixer', 'checker', 'validator', 'pr']);
    // The fixer keeps its own view: the diff.
    await page.locator('.steps li[data-step="fixer"]').getByText('x = 2').first().waitFor();
    expect(pageErrors).toEqual([]);
  });

  it('shows which pass a validation is, and a focused pass’s files with their reasons', async () => {
    const { owner, id, log } = await newTask();
    // A file name from the repository is text: markup in it is shown, never made.
    const hostile = 'tests/test_<img src=x onerror=alert(1)>.py';
    const focusedCommand = `python3 -m pytest -v 'tests/test_api.py' '${hostile}'`;
    await panel.h.deps.db.insert(taskLogs).values(
      log(
        'validator',
        validatorOutput({
          command: focusedCommand,
          passed: false,
          new_failures: ['tests/test_api.py::test_get'],
          pass: 'focused',
          focus: {
            files: [
              { path: 'tests/test_api.py', reason: 'failed last time' },
              { path: hostile, reason: 'imports a changed module' },
            ],
            command: focusedCommand,
            passed: false,
            duration_ms: 2_500,
          },
          message: 'focused pass: 2 test file(s) the change touches first failed, so the whole suite was not run',
        }),
      ),
    );

    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.goto(`/app/tasks/${id}`);
    const validator = page.locator('.steps li[data-step="validator"]');
    await validator.locator('.pass').waitFor();
    expect(await validator.locator('.pass').getAttribute('data-pass')).toBe('focused');
    expect(await validator.locator('.pass').innerText()).toContain('Focused pass');
    expect(await validator.locator('.focus').getAttribute('data-passed')).toBe('false');
    expect(await validator.locator('.focus > p').innerText()).toBe(
      'The focused pass failed in 2.5 s, on 2 test files:',
    );
    expect(await validator.locator('.focus li').allInnerTexts()).toEqual([
      'tests/test_api.py failed last time',
      `${hostile} imports a changed module`,
    ]);
    expect(await validator.locator('.focus img').count()).toBe(0);
    expect(await page.locator('.log li[data-step="validator"]').innerText()).toMatch(/focused pass$/);

    // The retry's verdict: the focused pass passed, so the whole suite ran and decided.
    await panel.h.deps.db.insert(taskLogs).values([
      log('fixer', fixerOutput('--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n')),
      log(
        'validator',
        validatorOutput({
          passed: true,
          pass: 'full',
          focus: {
            files: [{ path: 'tests/test_api.py', reason: 'changed' }],
            command: "python3 -m pytest -v 'tests/test_api.py'",
            passed: true,
            duration_ms: 1_000,
          },
        }),
      ),
    ]);
    await page.reload();
    await validator.locator('.pass[data-pass="full"]').waitFor();
    expect(await validator.locator('.pass').innerText()).toContain('the whole suite ran after the focused pass');
    expect(await validator.locator('.focus > p').innerText()).toBe('The focused pass passed in 1.0 s, on 1 test file:');
    expect(await validator.locator('.focus li').allInnerTexts()).toEqual(['tests/test_api.py changed']);
    const passes = await page.locator('.log li[data-step="validator"]').allInnerTexts();
    expect(passes.map((t) => /(\w+) pass$/.exec(t)?.[1])).toEqual(['focused', 'full']);
    await screenshot(page, 'validation-passes');
    expect(pageErrors).toEqual([]);
  });

  it("shows a scaffold task's own steps only, and no pull-request mode", async () => {
    const owner = await newAccount(panel.h, { plan: 'pro', credits: 3 });
    const created = await panel.h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { task_type: 'scaffold', prompt: 'a site for a bakery' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id: string = created.json().id;
    await panel.h.deps.db.insert(taskLogs).values({
      taskId: id,
      step: 'site_plan',
      status: 'running',
      output: {},
      createdAt: panel.h.clock.now(),
    });
    const { page } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.goto(`/app/tasks/${id}`);
    await page.locator('.steps li[data-step="site_plan"]').waitFor();
    expect(
      await page.locator('.steps > li').evaluateAll((items) => items.map((li) => li.getAttribute('data-step'))),
    ).toEqual(['site_plan']);
    const facts = await page.locator('dl').first().innerText();
    expect(facts).not.toContain('pull request');
    expect(facts).not.toMatch(/^Mode$/m);
    await screenshot(page, 'scaffold-task');
  });
});
