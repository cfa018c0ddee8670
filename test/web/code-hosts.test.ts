import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { haveChromium, launch, newPage, screenshot, signInWithKeyboard } from './browser.js';
import { ensurePanelBuilt } from './build-panel.js';

/** The account page's code hosts in headless Chromium: one section per host, connected and disconnected per host. */
let h: Harness;
let ghes: FakeGitHub;
let browser: Browser;
let baseUrl: string;

beforeAll(async () => {
  if (!haveChromium) return;
  await ensurePanelBuilt();
  ghes = await startFakeGitHub();
  h = await startHarness(
    {},
    { scm: 'fake', hosts: [{ id: 'ghes', kind: 'github', web_url: ghes.webUrl, api_url: ghes.apiUrl }] },
  );
  baseUrl = await h.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await h?.close();
  await ghes?.close();
});

describe.skipIf(!haveChromium)('the panel connects code hosts', { timeout: 60_000 }, () => {
  it('shows each host, connects the second with a token, disconnects it, leaving the first', async () => {
    const { token, scm } = await newAccount(h, { plan: 'pro' });
    const there = ghes.addUser('enterprise-dev');
    const { page, pageErrors } = await newPage(browser, baseUrl);
    await page.goto('/app/');
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByRole('heading', { name: 'Code hosts' }).waitFor();
    const first = page.getByRole('region', { name: 'GitHub', exact: true });
    const second = page.getByRole('region', { name: 'GitHub (ghes)' });
    expect(await first.textContent()).toContain(`Connected to GitHub as ${scm!.login}`);
    expect(await second.textContent()).toContain(`Not connected. Pull requests on ${ghes.webUrl}`);

    await second.getByLabel('GitHub (ghes) personal access token (repo scope)').fill(there.token);
    await second.getByRole('button', { name: 'Connect' }).click();
    await expect.poll(() => second.textContent()).toContain('Connected to GitHub (ghes) as enterprise-dev');
    await screenshot(page, 'account-code-hosts');
    expect(await page.content()).not.toContain(there.token);

    await second.getByRole('button', { name: 'Disconnect' }).click();
    await expect.poll(() => second.textContent()).toContain('Not connected');
    expect(await first.textContent()).toContain(`Connected to GitHub as ${scm!.login}`);
    const me = (
      await h.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } })
    ).json();
    expect(me.scm_hosts.map((x: { login: string | null }) => x.login)).toEqual([scm!.login, null]);
    expect(pageErrors).toEqual([]);
  });
});
