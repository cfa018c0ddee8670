import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { taskLogs, tasks, workspaces } from '../../src/db/schema.js';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/** What a newcomer's empty workspace says in the panel: what to do next, with nothing cut off or misnamed. */
const panel = servePanel(() => startHarness());

describe.skipIf(!haveChromium)('the panel at first look', { timeout: 90_000 }, () => {
  it('says what to do on empty lists, names the token column, and shows the whole workspace name', async () => {
    const { token } = await newAccount(panel.h, {
      plan: 'pro',
      email: 'a-rather-long-person.name-for-the-switcher@example.com',
    });
    const { page } = await panel.newPage();
    await page.goto('/app/');
    await signInWithKeyboard(page, token);
    expect(await page.getByTestId('no-tasks').textContent()).toContain('No tasks yet. Start one with New task');

    // the switcher shows the workspace's whole name: the selected option's text fits in the select
    const fits = await page.locator('.switcher select').evaluate((select: HTMLSelectElement) => {
      const style = getComputedStyle(select);
      const ctx = document.createElement('canvas').getContext('2d')!;
      ctx.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
      const text = select.options[select.selectedIndex]!.text;
      return { text, need: ctx.measureText(text).width, have: select.clientWidth - 24 };
    });
    expect(fits.text).toContain('a-rather-long-person.name-for-the-switcher@example.com');
    expect(fits.need).toBeLessThanOrEqual(fits.have);
    await screenshot(page, 'tasks-empty');

    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Personal access tokens' }).waitFor();
    const headers = await page.locator('table.tokens th').allTextContents();
    expect(headers).toContain('Secret ends in');
    expect(headers).not.toContain('Ends in');
    expect(await page.getByTestId('no-webhooks').textContent()).toContain('No endpoints yet. Add a URL above');
    expect(await page.locator('table.webhooks').count()).toBe(0);
    await screenshot(page, 'account-empty-webhooks');
  });

  it('takes no feedback on a task that failed before doing anything, and takes it once a step past the planner ran', async () => {
    const owner = await newAccount(panel.h, { plan: 'pro', credits: 3 });
    panel.h.github.createRepo('acme', 'first-look');
    // No worker runs here: each task is written as a run that failed at the step named.
    const failedAt = async (steps: string[]) => {
      const created = await panel.h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: owner.auth,
        payload: { prompt: 'fix the bug', repo_url: 'https://github.com/acme/first-look' },
      });
      expect(created.statusCode, created.body).toBe(201);
      const id: string = created.json().id;
      await panel.h.deps.db.insert(taskLogs).values(
        steps.map((step, i) => ({
          taskId: id,
          step,
          status: i === steps.length - 1 ? 'failed' : 'done',
          output: {},
          createdAt: panel.h.clock.now(),
        })),
      );
      await panel.h.deps.db.update(tasks).set({ status: 'failed', error: 'the step failed' }).where(eq(tasks.id, id));
      return id;
    };
    const atPlanner = await failedAt(['planner']);
    const atLocator = await failedAt(['planner', 'locator']);

    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.goto(`/app/tasks/${atPlanner}`);
    await page.locator('[data-stream="ended"]').waitFor();
    expect(await page.locator('form.feedback').count()).toBe(0);
    expect(await page.getByTestId('no-feedback').textContent()).toContain('failed before it changed anything');
    await screenshot(page, 'task-failed-before-work');

    await page.goto(`/app/tasks/${atLocator}`);
    await page.locator('[data-stream="ended"]').waitFor();
    await page.getByRole('heading', { name: 'Feedback' }).waitFor();
    expect(await page.getByTestId('no-feedback').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('says what to do in a new team workspace on the free plan with no credits, and not once it is funded', async () => {
    const owner = await newAccount(panel.h, { plan: 'pro', credits: 3, scm: false });
    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.getByRole('link', { name: 'Workspace' }).click();
    await page.getByTestId('workspace-name').waitFor();
    // the personal workspace, funded, says nothing of it
    expect(await page.getByTestId('workspace-unfunded').count()).toBe(0);

    await page.getByLabel('Name of the new workspace').fill('Crew');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe('Crew');
    expect(await page.getByTestId('workspace-plan').textContent()).toBe('free');
    expect(await page.getByTestId('workspace-credits').textContent()).toBe('0');
    const crew = await page.locator('.switcher').getAttribute('data-workspace');
    const note = await page.getByTestId('workspace-unfunded').innerText();
    expect(note).toContain('previews, without a pull request');
    expect(note).toContain(`PATCH /v1/admin/workspaces/${crew}`);
    expect(note).toContain('Account → Model provider');
    await screenshot(page, 'workspace-unfunded');

    // once the operator gives it credits the sentence goes
    await panel.h.deps.db.update(workspaces).set({ credits: 5 }).where(eq(workspaces.id, crew!));
    await page.reload();
    await expect.poll(() => page.getByTestId('workspace-credits').textContent()).toBe('5');
    expect(await page.getByTestId('workspace-unfunded').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });

  it('collapses a 40-turn trajectory to its first and last turns, the middle behind a button', async () => {
    const owner = await newAccount(panel.h, { plan: 'pro', credits: 3 });
    panel.h.github.createRepo('acme', 'long-run');
    const created = await panel.h.app.inject({
      method: 'POST',
      url: '/v1/tasks',
      headers: owner.auth,
      payload: { prompt: 'fix the bug', repo_url: 'https://github.com/acme/long-run' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id: string = created.json().id;
    // No worker runs here: the fixer's log is written as an agent run of 40 turns writes it.
    const record = (output: Record<string, unknown>) => ({
      taskId: id,
      step: 'fixer',
      status: 'running',
      output,
      createdAt: panel.h.clock.now(),
    });
    const turn = (n: number) =>
      record({
        agent_turn: {
          turn: n,
          tool: 'bash',
          action: `echo turn ${n}`,
          exit_code: 0,
          observation: `turn ${n}`,
          tokens: n * 10,
          cost_usd: 0,
        },
      });
    await panel.h.deps.db.insert(taskLogs).values([record({}), ...Array.from({ length: 40 }, (_, i) => turn(i + 1))]);

    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    await page.goto(`/app/tasks/${id}`);
    const table = page.getByRole('table', { name: '40 turns' });
    await table.waitFor();
    const shown = () =>
      table.locator('tbody tr[data-turn]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-turn'))));
    expect(await shown()).toEqual([1, 2, 3, 4, 5, 36, 37, 38, 39, 40]);
    const more = table.getByRole('button', { name: 'Show 30 more turns' });
    // the button sits between the first turns and the last
    expect(await table.locator('tbody tr:nth-child(6)').getAttribute('class')).toBe('more-turns');
    await screenshot(page, 'trajectory-collapsed');

    await more.click();
    expect(await shown()).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(await more.count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
