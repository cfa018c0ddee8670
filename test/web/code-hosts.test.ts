import { afterAll, describe, expect, it } from 'vitest';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/** The account page's code hosts in headless Chromium: one section per host, connected and disconnected per host. */
let ghes: FakeGitHub;

// Registered first, so it runs last: the service is closed before the host it was configured with.
afterAll(async () => {
  await ghes?.close();
});
const panel = servePanel(async () => {
  ghes = await startFakeGitHub();
  return startHarness(
    {},
    { scm: 'fake', hosts: [{ id: 'ghes', kind: 'github', web_url: ghes.webUrl, api_url: ghes.apiUrl }] },
  );
});

describe.skipIf(!haveChromium)('the panel connects code hosts', { timeout: 60_000 }, () => {
  it('shows each host, connects the second with a token, disconnects it, leaving the first', async () => {
    const { token, scm } = await newAccount(panel.h, { plan: 'pro' });
    const there = ghes.addUser('enterprise-dev');
    const { page, pageErrors } = await panel.newPage();
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
      await panel.h.app.inject({ method: 'GET', url: '/v1/me', headers: { authorization: `Bearer ${token}` } })
    ).json();
    expect(me.scm_hosts.map((x: { login: string | null }) => x.login)).toEqual([scm!.login, null]);
    expect(pageErrors).toEqual([]);
  });
});
