import { describe, expect, it } from 'vitest';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/**
 * The panel's Audit page in headless Chromium: the owner sees the workspace's log (the sign-in
 * itself, a token minted), filters it, and the export link answers JSON Lines.
 */
const panel = servePanel(() => startHarness());

describe.skipIf(!haveChromium)('the control panel: the audit log', { timeout: 60_000 }, () => {
  it('lists the workspace’s rows newest first, filters by action and links the JSON-lines export', async () => {
    const { token, auth } = await newAccount(panel.h, { scm: false });
    const minted = await fetch(`${panel.baseUrl}/v1/me/tokens`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'robot' }),
    });
    expect(minted.status).toBe(201);
    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit log' }).waitFor();
    const table = page.getByTestId('audit');
    await table.locator('tr[data-action="session.signed_in"]').waitFor();
    expect(
      await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action'))),
    ).toEqual(['session.signed_in', 'token.minted']);
    expect(await table.locator('tr[data-action="token.minted"]').textContent()).toContain('you (owner)');
    await screenshot(page, 'audit');

    await page.getByLabel(/^Action/).fill('token.');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action'))))
      .toEqual(['token.minted']);

    const href = await page.getByRole('link', { name: 'Export (JSON Lines)' }).getAttribute('href');
    expect(href).toMatch(/\/audit\.jsonl\?action=token\.$/);
    const exported = await page.evaluate(async (url) => (await fetch(url!)).text(), href);
    expect(
      exported
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).action),
    ).toEqual(['token.minted']);
    expect(pageErrors).toEqual([]);
    await context.close();
  });

  it('is not offered to a member', async () => {
    const owner = await newAccount(panel.h, { scm: false });
    const { context, page } = await panel.newPage();
    // Everyone owns their personal workspace: a member is one of a team.
    const team = await fetch(`${panel.baseUrl}/v1/workspaces`, {
      method: 'POST',
      headers: { ...owner.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Crew' }),
    }).then((r) => r.json() as Promise<{ id: string }>);
    const teamToken = await fetch(`${panel.baseUrl}/v1/me/tokens`, {
      method: 'POST',
      headers: { ...owner.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ workspace_id: team.id }),
    }).then((r) => r.json() as Promise<{ token: string }>);
    const inv = await fetch(`${panel.baseUrl}/v1/workspaces/${team.id}/invitations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${teamToken.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ role: 'member' }),
    }).then((r) => r.json() as Promise<{ token: string }>);
    const member = await newAccount(panel.h, { scm: false });
    await fetch(`${panel.baseUrl}/v1/invitations/accept`, {
      method: 'POST',
      headers: { ...member.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ token: inv.token }),
    });
    const memberToken = await fetch(`${panel.baseUrl}/v1/me/tokens`, {
      method: 'POST',
      headers: { ...member.auth, 'content-type': 'application/json' },
      body: JSON.stringify({ workspace_id: team.id }),
    }).then((r) => r.json() as Promise<{ token: string }>);
    await signInWithKeyboard(page, memberToken.token);
    await page.getByRole('link', { name: 'Workspace' }).waitFor();
    expect(await page.getByRole('link', { name: 'Audit' }).count()).toBe(0);
    await context.close();
  });
});
