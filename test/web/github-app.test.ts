import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CookieJar } from '../support/cookie-jar.js';
import { type FakeGitHub, startFakeGitHub } from '../support/fake-github/server.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';
import { appOnFake } from '../support/github-app.js';
import { heldPort } from '../support/ports.js';
import { haveChromium, launch, newPage, screenshot, signInWithKeyboard } from './browser.js';
import { ensurePanelBuilt } from './build-panel.js';

/**
 * The account page's GitHub App (issue 47) in headless Chromium: the owner installs the app from the
 * panel, the browser walks the fake GitHub's install page, emend's setup URL, the app's sign-in and
 * the callback, and the installation is listed back in the panel, then released. The service must
 * know its address before it listens (the app's URLs and the sign-in's redirect name it), so this
 * file serves the panel itself instead of through servePanel's port 0.
 */
let f: FakeGitHub | undefined;
let h: Harness | undefined;
let browser: Browser | undefined;
let base = '';
let keyDir = '';

beforeAll(async () => {
  if (!haveChromium) return;
  await ensurePanelBuilt();
  f = await startFakeGitHub();
  const held = await heldPort();
  base = `http://127.0.0.1:${held.port}`;
  keyDir = mkdtempSync(join(tmpdir(), 'emend-app-panel-'));
  const { entry } = appOnFake(f, base, keyDir);
  h = await startHarness({ EMEND_BASE_URL: base, EMEND_SCM_HOSTS: JSON.stringify([entry]) }, { scm: 'fake' });
  await held.release();
  await h.app.listen({ host: '127.0.0.1', port: held.port });
  browser = await launch();
  f.addOrg('acme', { admins: ['alice'], members: ['bob'] });
  f.addOrg('globex', { admins: ['gina'] });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await h?.close();
  await f?.close();
  if (keyDir) rmSync(keyDir, { recursive: true, force: true });
});

type Person = Awaited<ReturnType<typeof newAccount>>;

/** The API as `auth`, answering its JSON (204: null); fails the test on an error answer. */
async function api(auth: Record<string, string>, method: 'GET' | 'POST', url: string, payload?: object) {
  const res = await h!.app.inject({ method, url, headers: auth, ...(payload ? { payload } : {}) });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.statusCode === 204 ? null : res.json();
}

/** A token of `who` acting in the workspace `workspaceId` (one of theirs). */
async function tokenIn(who: Person, workspaceId: string): Promise<Record<string, string>> {
  const minted = await api(who.auth, 'POST', '/v1/me/tokens', { name: 'team', workspace_id: workspaceId });
  return { authorization: `Bearer ${minted.token}` };
}

describe.skipIf(!haveChromium)('the panel installs and claims the GitHub App', { timeout: 60_000 }, () => {
  it("the owner installs it on acme through GitHub's pages, sees it listed as claimed by alice, and releases it", async () => {
    const owner = await newAccount(h!, { plan: 'pro', scm: false });
    const { page, pageErrors } = await newPage(browser!, base);
    await signInWithKeyboard(page, owner.token);
    await page.getByRole('link', { name: 'Account' }).click();
    const appSection = page.getByRole('region', { name: 'GitHub App' });
    await expect.poll(() => appSection.getByTestId('no-installations').count()).toBe(1);
    // No connection and no installation: nothing reaches a repository, so its settings wait.
    await page.getByTestId('repo-settings-disabled').waitFor();

    // GitHub's install page approves at once as alice (acme's admin), and the app's sign-in as alice.
    f!.installAs('alice', { account: 'acme' });
    f!.oauthAs('alice');
    await appSection.getByRole('button', { name: 'Install the GitHub App' }).click();
    // GitHub's pages, the setup URL, the sign-in and the callback bring the browser back to the panel.
    await page.waitForURL((url) => url.pathname === '/app/account' && url.searchParams.get('claimed') === 'acme');
    const [installation] = f!.installations();

    const row = appSection.locator(`tr[data-installation="${installation!.id}"]`);
    await row.waitFor();
    const cells = await row.getByRole('cell').allTextContents();
    expect(cells.slice(0, 4)).toEqual(['acme', 'organisation', expect.stringMatching(/^alice on /), 'active']);
    // The installation serves acme's repositories without a person's connection.
    expect(await page.getByTestId('repo-settings-disabled').count()).toBe(0);
    expect(await page.getByLabel('Repository URL').isEnabled()).toBe(true);
    await screenshot(page, 'account-github-app');

    page.once('dialog', (dialog) => void dialog.accept());
    await row.getByRole('button', { name: 'Release' }).click();
    await expect.poll(() => appSection.getByTestId('no-installations').count()).toBe(1);
    expect(await row.count()).toBe(0);
    const listed = await h!.app.inject({ method: 'GET', url: '/v1/apps/installations', headers: owner.auth });
    expect(listed.json()).toEqual({ installations: [] });
    expect(pageErrors).toEqual([]);
  });

  it('a member of the workspace sees its installation, but neither Install nor Release', async () => {
    const owner = await newAccount(h!, { plan: 'pro', scm: false });
    const member = await newAccount(h!, { plan: 'pro', scm: false });
    const team = await api(owner.auth, 'POST', '/v1/workspaces', { name: 'Globex team' });
    const ownerInTeam = await tokenIn(owner, team.id);
    // The owner's claim, through the API's browser flow (its cookie), for the team workspace.
    f!.installAs('gina', { account: 'globex' });
    f!.oauthAs('gina');
    const jar = new CookieJar();
    const start = await jar.fetch(`${base}/v1/apps/github/install`, { headers: ownerInTeam });
    let res = await jar.fetch(((await start.json()) as { install_url: string }).install_url);
    // GitHub's pages, the setup URL, the sign-in and the callback, which sends the browser to the panel.
    for (let hops = 0; hops < 5 && res.status === 302; hops++) {
      const next = res.headers.get('location')!;
      if (next.startsWith('/app/')) break;
      res = await jar.fetch(next);
    }
    expect(res.headers.get('location'), await res.clone().text()).toBe('/app/account?claimed=globex');
    const invitation = await api(ownerInTeam, 'POST', `/v1/workspaces/${team.id}/invitations`, { role: 'member' });
    await api(member.auth, 'POST', '/v1/invitations/accept', { token: invitation.token });
    const memberInTeam = await tokenIn(member, team.id);

    const { page, pageErrors } = await newPage(browser!, base);
    await signInWithKeyboard(page, memberInTeam.authorization!.slice('Bearer '.length));
    await page.getByRole('link', { name: 'Account' }).click();
    const appSection = page.getByRole('region', { name: 'GitHub App' });
    const row = appSection.locator('tr[data-installation]');
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      'globex',
      'organisation',
      expect.stringMatching(/^gina on /),
      'active',
    ]);
    expect(await appSection.getByRole('button').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
