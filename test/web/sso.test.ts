import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestOidcProvider, serveWithOidc } from '../support/oidc-provider.js';
import { haveChromium, launch, newPage, screenshot } from './browser.js';
import { ensurePanelBuilt } from './build-panel.js';

/**
 * The sign-in page's single sign-on in headless Chromium: a work email typed, the browser walks the
 * OpenID provider's pages (oidc-provider on loopback) and comes back signed in. The provider must
 * know emend's callback before emend listens, so this file serves the panel itself on a held port.
 */
let served: Awaited<ReturnType<typeof serveWithOidc>> | undefined;
let idp: TestOidcProvider | undefined;
let browser: Browser | undefined;
let base = '';

beforeAll(async () => {
  if (!haveChromium) return;
  await ensurePanelBuilt();
  served = await serveWithOidc();
  ({ idp, base } = served);
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await served?.close();
});

describe.skipIf(!haveChromium)('the panel signs in through single sign-on', { timeout: 60_000 }, () => {
  it('a person types their work email, passes the provider and lands in the panel signed in; a refusal is a page saying why', async () => {
    idp!.addUser('ines-sub', { email: 'ines@corp.example', name: 'Ines' });
    idp!.as('ines-sub');
    const { context, page, pageErrors } = await newPage(browser!, base);
    await page.goto('/app/');
    await page.getByRole('heading', { name: 'With single sign-on' }).waitFor();
    await page.getByLabel('Work email').fill('ines@corp.example');
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await page.waitForURL(`${base}/app/`);
    await expect.poll(() => page.getByText('ines@corp.example').count()).toBeGreaterThan(0);
    await screenshot(page, 'sso-signed-in');
    const session = (await context.cookies()).find((c) => c.name === 'emend_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    expect(pageErrors).toEqual([]);
    await context.close();

    idp!.removeUser('ines-sub');
    const second = await newPage(browser!, base);
    await second.page.goto('/app/');
    await second.page.getByLabel('Work email').fill('ines@corp.example');
    await second.page.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await second.page.getByRole('heading', { name: 'Sign-in failed' }).waitFor();
    expect(await second.page.textContent('main')).toContain('access_denied');
    expect((await second.context.cookies()).some((c) => c.name === 'emend_session')).toBe(false);
    await second.context.close();
  });
});
