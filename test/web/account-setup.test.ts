import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { tasks, workspaces } from '../../src/db/schema.js';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/** Setting a workspace up from the panel: the code host first, then what needs it; the defaults of new tasks. */
const panel = servePanel(() => startHarness());

describe.skipIf(!haveChromium)('the panel sets a workspace up', { timeout: 90_000 }, () => {
  it('shows the code host first and keeps repository settings disabled, saying why, until a host is connected', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', scm: false });
    const { page } = await panel.newPage();
    await page.goto('/app/');
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Code host' }).waitFor();
    const headings = await page.locator('.account .card h2').allTextContents();
    // Profile, then the code host before every other section
    expect(headings.slice(0, 2)).toEqual(['Profile', 'Code host']);
    expect(headings).toContain('Defaults for new tasks');
    const card = page.locator('.card', { has: page.getByRole('heading', { name: 'Repository settings' }) });
    expect(await card.getByTestId('repo-settings-disabled').textContent()).toContain('Connect a code host first');
    expect(await page.getByLabel('Repository URL').isDisabled()).toBe(true);
    expect(await page.getByRole('button', { name: 'Load' }).isDisabled()).toBe(true);
    await screenshot(page, 'account-no-code-host');

    // connect with a token: the section comes alive
    const person = panel.h.github.addUser('panel-setup-person');
    await page.locator('#scm-token-github').fill(person.token);
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await expect.poll(() => page.getByLabel('Repository URL').isDisabled()).toBe(false);
    expect(await page.getByTestId('repo-settings-disabled').count()).toBe(0);
    await screenshot(page, 'account-code-host-connected');
  });

  it('saves the default fixer and approval mode, and the New task form offers a fixer of its own', async () => {
    const owner = await newAccount(panel.h, { plan: 'pro', credits: 5 });
    const { page } = await panel.newPage();
    await page.goto('/app/');
    await signInWithKeyboard(page, owner.token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Fixer of fix tasks').selectOption('agent');
    await expect.poll(() => page.getByRole('status').first().textContent()).toContain('Saved.');
    await page.getByLabel('Approval', { exact: true }).selectOption('manual');
    const stored = async () =>
      (
        await panel.h.deps.db
          .select({ fixer: workspaces.fixer, approval: workspaces.approvalMode })
          .from(workspaces)
          .where(eq(workspaces.id, owner.workspace.id))
      )[0];
    await expect.poll(stored).toEqual({ fixer: 'agent', approval: 'manual' });
    await screenshot(page, 'account-task-defaults');

    panel.h.github.createRepo(owner.scm!.login, 'calc', { files: { 'README.md': '# calc\n' } });
    await page.getByRole('link', { name: 'New task' }).click();
    const fixer = page.getByLabel('Fixer');
    expect(await fixer.locator('option').first().textContent()).toBe('Workspace default (agent)');
    await fixer.selectOption('pipeline');
    await page.getByLabel('Repository URL').fill(`https://github.com/${owner.scm!.login}/calc`);
    await page.getByLabel('What should change?').fill('Make add() add');
    await screenshot(page, 'new-task-fixer');
    await page.getByRole('button', { name: 'Start task' }).click();
    await page.waitForURL(/\/app\/tasks\//);
    const id = page.url().split('/').at(-1)!;
    const [task] = await panel.h.deps.db.select({ fixer: tasks.fixer }).from(tasks).where(eq(tasks.id, id));
    expect(task?.fixer).toBe('pipeline');
  });
});
