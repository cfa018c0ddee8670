import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskLogs } from '../../src/db/schema.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { fixerOutput } from '../support/step-outputs.js';
import { haveChromium, launch, newPage, signInWithKeyboard } from './browser.js';
import { ensurePanelBuilt } from './build-panel.js';

/** The panel's step views in Chromium: a step it has no view of its own for gets a generic one. */
let h: Harness;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  if (!haveChromium) return;
  await ensurePanelBuilt();
  h = await startHarness();
  h.github.createRepo('psf', 'requests');
  baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe.skipIf(!haveChromium)('the control panel: step views', { timeout: 120_000 }, () => {
  it('shows a step it has no view for, in the log’s order, with the fields of its output', async () => {
    const owner = await newAccount(h, { plan: 'pro', credits: 3 });
    const created = await h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'fix the bug', repo_url: 'https://github.com/psf/requests' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id: string = created.json().id;
    // No worker runs here: the log is written as a run with a step added after the fixer would write it.
    const diff = '--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
    const log = (step: string, output: Record<string, unknown>) => ({
      taskId: id,
      step,
      status: 'done',
      output,
      createdAt: h.clock.now(),
    });
    await h.deps.db
      .insert(taskLogs)
      .values([
        log('fixer', fixerOutput(diff)),
        log('checker', { checked_files: 1, verdict: true, notes: 'first line\nsecond line', found: ['a.py', 'b.py'] }),
      ]);

    const { page, pageErrors } = await newPage(browser, baseUrl);
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
});
