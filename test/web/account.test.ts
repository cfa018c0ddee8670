import { describe, expect, it } from 'vitest';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/**
 * The control panel in real headless Chromium against the service on a real port: signing in
 * (by keyboard), the cookie and where the token is not, tokens shown once, CSRF, signing out.
 */
const panel = servePanel(() => startHarness());

describe.skipIf(!haveChromium)('the control panel: signing in and the account', { timeout: 60_000 }, () => {
  it(
    'signs in with a token by keyboard alone; the cookie is HttpOnly and the token is nowhere in the page or its ' +
      'storage',
    async () => {
      const { token, account } = await newAccount(panel.h, { plan: 'pro', credits: 7, scm: false });
      const { context, page, pageErrors } = await panel.newPage();
      await page.goto('/app/');
      await page.getByRole('heading', { name: 'Sign in to emend' }).waitFor();
      await screenshot(page, 'sign-in');
      await signInWithKeyboard(page, token);
      await expect.poll(() => page.getByText(account.email).count()).toBeGreaterThan(0);

      const cookies = await context.cookies();
      const session = cookies.find((c) => c.name === 'emend_session')!;
      expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
      expect(session.value).not.toContain(token);
      const seen = await page.evaluate(() => ({
        local: JSON.stringify({ ...localStorage }),
        session: JSON.stringify({ ...sessionStorage }),
        dom: document.documentElement.outerHTML,
        inputs: [...document.querySelectorAll('input')].map((i) => i.value).join('\n'),
        cookie: document.cookie,
      }));
      for (const [where, text] of Object.entries(seen)) expect(text, where).not.toContain(token);
      expect(seen.cookie).not.toContain('emend_session');
      expect(pageErrors).toEqual([]);
      await context.close();
    },
  );

  it('shows an API error in words, with the server’s message', async () => {
    const { context, page } = await panel.newPage();
    await page.goto('/app/');
    await page.getByLabel('Personal access token').fill(`tk_${'Q'.repeat(40)}`);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain('That token is unknown, revoked or expired');
    expect(await alert.textContent()).toContain('Server said: the token is unknown, revoked or expired');
    // the field was cleared after the attempt
    expect(await page.getByLabel('Personal access token').inputValue()).toBe('');
    await context.close();
  });

  it('creates a personal access token and shows its secret exactly once; lists and revokes it', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', credits: 3, scm: false });
    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(await page.getByTestId('credits').textContent()).toBe('3');

    await page.getByLabel('Name of the new token').fill('ci robot');
    await page.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByTestId('new-token');
    await shown.waitFor();
    const secret = await shown.inputValue();
    expect(secret).toMatch(/^tk_[A-Za-z0-9_-]{40}$/);
    // the secret works as a Bearer token
    const me = await fetch(`${panel.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${secret}` } });
    expect(me.status).toBe(200);
    const row = page.locator('table.tokens tr', { hasText: 'ci robot' });
    await row.waitFor();
    expect(await row.textContent()).toContain(secret.slice(-4));
    await screenshot(page, 'account');

    // once: after a reload it is gone from the page, and only the last four characters remain
    await page.reload();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    await page.locator('table.tokens tr', { hasText: 'ci robot' }).waitFor();
    expect(await page.getByTestId('new-token').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);

    page.once('dialog', (d) => void d.accept());
    await page.getByRole('button', { name: 'Revoke the token ci robot' }).click();
    await page.locator('table.tokens tr', { hasText: 'ci robot' }).getByText('revoked').waitFor();
    expect((await fetch(`${panel.baseUrl}/v1/me`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(
      401,
    );
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('lists the signed-in browsers, this one marked, and ends another: that browser is signed out', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', scm: false });
    const other = await panel.newPage();
    await signInWithKeyboard(other.page, token);
    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    const rows = page.getByTestId('sessions').locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const mine = rows.filter({ hasText: '(this browser)' });
    expect(await mine.count()).toBe(1);
    expect(await mine.textContent()).toContain('127.0.0.1');
    expect(await page.content()).not.toContain(token);

    page.once('dialog', (d) => void d.accept());
    await rows
      .filter({ hasNotText: '(this browser)' })
      .getByRole('button', { name: /^End the session signed in/ })
      .click();
    await expect
      .poll(async () => [await rows.count(), await page.getByRole('alert').allTextContents()])
      .toEqual([1, []]);
    // the other browser's next call is refused, and the panel sends it back to sign in
    await other.page.reload();
    await other.page.getByRole('heading', { name: 'Sign in to emend' }).waitFor();
    // this one is still signed in
    await page.reload();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    expect(pageErrors).toEqual([]);
    await other.context.close();
    await context.close();
  });

  it('saves a provider key with its context window, and lists the window', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', scm: false });
    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Account' }).waitFor();
    await page.getByLabel('API key').fill('sk-panel-window-0123456789');
    await page.getByLabel('Context window in tokens').fill('32768');
    await page.getByRole('button', { name: 'Save key' }).click();
    await page.getByText('Saved the openai key.').waitFor();
    const row = page.locator('ul.keys li', { hasText: 'openai key ending in' });
    await row.waitFor();
    expect(await row.textContent()).toContain('context window 32,768 tokens');
    const keys = await fetch(`${panel.baseUrl}/v1/me/keys`, { headers: { authorization: `Bearer ${token}` } });
    expect(await keys.json()).toEqual([expect.objectContaining({ provider: 'openai', context_window: 32_768 })]);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('refuses a cookie-authenticated POST whose Origin is not the panel’s (403), and takes the panel’s own', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', scm: false });
    const { context, page } = await panel.newPage();
    await signInWithKeyboard(page, token);
    // the browser context's own cookie jar, sent by a request that a page on another site could forge
    for (const headers of [{ origin: 'https://evil.example' }, {}] as Record<string, string>[]) {
      const res = await context.request.post(`${panel.baseUrl}/v1/me/tokens`, { headers, data: { name: 'csrf' } });
      expect(res.status(), JSON.stringify(headers)).toBe(403);
      expect((await res.json()).error).toBe('forbidden');
    }
    const ok = await context.request.post(`${panel.baseUrl}/v1/me/tokens`, {
      headers: { origin: panel.baseUrl },
      data: { name: 'same origin' },
    });
    expect(ok.status()).toBe(201);
    // and from the panel itself (fetch sends the Origin header)
    const status = await page.evaluate(
      async () =>
        (
          await fetch('/v1/me/byok', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"enabled":true}',
          })
        ).status,
    );
    expect(status).toBe(200);
    await context.close();
  });

  it('signs out: back to the sign-in page, the cookie is gone and the API answers 401', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', scm: false });
    const { context, page } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to emend' }).waitFor();
    expect((await context.cookies()).find((c) => c.name === 'emend_session')).toBeUndefined();
    expect((await context.request.get(`${panel.baseUrl}/v1/me`)).status()).toBe(401);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to emend' }).waitFor();
    await context.close();
  });

  it('signs in with a demo token for an email', async () => {
    const { context, page } = await panel.newPage();
    await page.goto('/app/');
    await page.getByLabel('Email', { exact: true }).fill('someone@example.com');
    await page.getByRole('button', { name: 'Get a demo token and sign in' }).click();
    await page.getByRole('heading', { name: 'Tasks' }).waitFor();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByText('This is a demo account').waitFor();
    expect(await page.getByTestId('plan').textContent()).toBe('demo');
    await context.close();
  });
});
