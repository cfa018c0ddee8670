import { describe, expect, it } from 'vitest';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/**
 * Issue 45: the panel says how the operator set the server up. This server has no model key of
 * its own, demo tokens off, and EMEND_BASE_URL at its localhost default: "Try a demo" is hidden,
 * the Model provider card says what to do about the missing key, and an invitation link made from
 * localhost carries a warning. (Demos on, the default: test/web/account.test.ts signs in with one.)
 */
const panel = servePanel(() => startHarness({ OPENAI_API_KEY: '', EMEND_DEMO_TOKENS: 'off' }));

describe.skipIf(!haveChromium)('the panel on a server set up for this machine only', { timeout: 60_000 }, () => {
  it('hides "Try a demo" when the operator turned demo tokens off', async () => {
    const { context, page, pageErrors } = await panel.newPage();
    await page.goto('/app/');
    await page.getByRole('heading', { name: 'With a token' }).waitFor();
    // The methods are asked once; the token form is there, the demo form never comes.
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'sign-in-demos-off');
    expect(await page.getByRole('heading', { name: 'Try a demo' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Get a demo token and sign in' }).count()).toBe(0);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('says in the Model provider card that the server has no model key, and what to do; then that own keys are used', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', credits: 3, scm: false });
    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Model provider' }).waitFor();
    const note = page.getByTestId('server-model-key');
    await expect.poll(() => note.textContent()).toContain('This server has no model key of its own');
    expect(await note.textContent()).toContain('save a key under Provider keys');
    expect(await note.getAttribute('class')).toBe('warning');
    await screenshot(page, 'account-no-server-key');

    // With a key of the workspace's own, in use: the card says the tasks use it.
    const headers = { 'content-type': 'application/json', origin: panel.baseUrl };
    const api = page.context().request;
    const saved = await api.post(`${panel.baseUrl}/v1/me/keys`, {
      headers,
      data: { provider: 'openai', api_key: 'sk-own-key-0123456789abcdef' },
    });
    expect(saved.status()).toBeLessThan(300);
    const byok = await api.post(`${panel.baseUrl}/v1/me/byok`, { headers, data: { enabled: true } });
    expect(byok.status()).toBe(200);
    await page.reload();
    await expect.poll(() => note.textContent()).toContain('Your tasks use your provider keys');
    expect(await note.getAttribute('class')).toBe('hint');
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('warns beside an invitation link that names localhost', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', scm: false });
    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Workspace', exact: true }).click();
    await page.getByRole('heading', { name: 'Workspace', exact: true }).waitFor();
    await page.getByLabel('Name of the new workspace').fill('Crew');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe('Crew');
    await page.getByRole('button', { name: 'Create invitation' }).click();
    const link = await page.getByTestId('invitation-link').inputValue();
    expect(link).toMatch(/^http:\/\/localhost:3000\/app\/#\/invitation\//);
    const warning = page.getByTestId('invitation-link-local');
    expect(await warning.textContent()).toContain('works only there');
    await screenshot(page, 'invitation-link-localhost');
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
