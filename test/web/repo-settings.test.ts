import { describe, expect, it } from 'vitest';
import { repoAttemptsDefault, repoSettingsFor } from '../../src/repos/repo-settings.js';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/** The account page's repository settings section in headless Chromium, against the service. */
const panel = servePanel(() => startHarness());
const REPO = 'https://github.com/acme/widgets';
const SECRET = 'npm_PANELSECRET_5a6b7c8d9e0f';

describe.skipIf(!haveChromium)('the panel manages repository settings', { timeout: 60_000 }, () => {
  it('loads a repository, saves commands and variables, saves a secret shown by name only, refuses PATH', async () => {
    // connected to a code host: the section is disabled until then
    const { token, account } = await newAccount(panel.h, { plan: 'pro' });
    const { page, pageErrors } = await panel.newPage();
    await page.goto('/app/');
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Repository URL').fill(REPO);
    await page.getByRole('button', { name: 'Load' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('No settings for this repository yet.');

    await page.getByLabel('Setup command').fill('make deps');
    await page.getByLabel('Test command').fill('make test');
    await page.getByLabel('Variables').fill('NODE_ENV=test\nFOO=a=b');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Settings saved.');

    await page.getByLabel('Secret name').fill('NPM_TOKEN');
    await page.getByLabel('Secret value').fill(SECRET);
    await page.getByRole('button', { name: 'Save secret' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Saved the secret NPM_TOKEN.');
    expect(await page.locator('ul.secrets').textContent()).toContain('NPM_TOKEN');
    expect(await page.getByLabel('Secret value').inputValue()).toBe('');
    expect(await page.content()).not.toContain(SECRET);
    expect(await repoSettingsFor(panel.h.deps, account.id, REPO)).toEqual({
      setupCommand: 'make deps',
      testCommand: 'make test',
      env: { FOO: 'a=b', NODE_ENV: 'test' },
      setupSecrets: { NPM_TOKEN: SECRET },
    });

    // a variable the sandbox owns is refused, naming it; removing a line removes the variable
    await page.getByLabel('Variables').fill('PATH=/evil');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect
      .poll(() => page.locator('.card', { hasText: 'Repository settings' }).textContent())
      .toContain('env.PATH: PATH is set by the sandbox');
    await page.getByLabel('Variables').fill('NODE_ENV=test');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Settings saved.');
    expect((await repoSettingsFor(panel.h.deps, account.id, REPO)).env).toEqual({ NODE_ENV: 'test' });

    await page.getByRole('button', { name: 'Delete the secret NPM_TOKEN' }).click();
    await expect.poll(() => page.locator('.card', { hasText: 'Setup secrets' }).textContent()).toContain('No secrets.');
    expect((await repoSettingsFor(panel.h.deps, account.id, REPO)).setupSecrets).toEqual({});
    // the one 400 is the refusal of PATH above
    expect(pageErrors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });

  it('saves a repository’s default attempts within the plan, and refuses more, naming the limit', async () => {
    const { token, account } = await newAccount(panel.h, { plan: 'pro' });
    const { page, pageErrors } = await panel.newPage();
    await page.goto('/app/');
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Repository URL').fill(REPO);
    await page.getByRole('button', { name: 'Load' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('No settings for this repository yet.');
    const attempts = page.getByLabel('Fixer attempts of tasks that name none');
    await attempts.selectOption('4');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect
      .poll(() => page.locator('.card', { hasText: 'Repository settings' }).textContent())
      .toContain('attempts: the pro plan allows at most 3 attempts per task (asked for 4)');
    await attempts.selectOption('3');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Settings saved.');
    expect(await repoAttemptsDefault(panel.h.deps.db, account.id, REPO)).toBe(3);
    // Loaded again, the page shows what is stored.
    await page.getByRole('button', { name: 'Load' }).click();
    await expect.poll(() => attempts.inputValue()).toBe('3');
    expect(pageErrors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  });
});
