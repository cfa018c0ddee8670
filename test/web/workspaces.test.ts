import { eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { accounts, workspaces } from '../../src/db/schema.js';
import { insertJoblessTask } from '../support/engine.js';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/**
 * Workspaces in the control panel (issue 33), in real headless Chromium against the service on a
 * real port: the switcher, the Workspace page's members and invitations by role, and the
 * invitation link's page, each person in a browser context (and session) of their own.
 */
const panel = servePanel(() => startHarness());

type Person = Awaited<ReturnType<typeof newAccount>>;

/** The API as `who` (their token: their personal workspace unless the path names another they may act in). */
async function api(who: Person, method: string, url: string, payload?: unknown) {
  const res = await panel.h.app.inject({
    method: method as 'GET',
    url,
    headers: who.auth,
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.statusCode === 204 ? null : res.json();
}

/** A team workspace made by `owner` (through the API), with its plan and credits set by the operator. */
async function teamOf(owner: Person, name: string, fields: { plan?: string; credits?: number } = {}) {
  const ws = (await api(owner, 'POST', '/v1/workspaces', { name })) as { id: string };
  if (Object.keys(fields).length) await panel.h.deps.db.update(workspaces).set(fields).where(eq(workspaces.id, ws.id));
  return ws.id;
}

/**
 * `who` joins the team as `role`: the owner's token acts in the owner's personal workspace, so the
 * invitation is made with a token of the team's (POST /v1/me/tokens workspace_id).
 */
async function join(owner: Person, teamId: string, who: Person, role: string) {
  const minted = (await api(owner, 'POST', '/v1/me/tokens', { name: 'team', workspace_id: teamId })) as {
    token: string;
  };
  const teamToken = { ...owner, auth: { authorization: `Bearer ${minted.token}` } };
  const invitation = (await api(teamToken, 'POST', `/v1/workspaces/${teamId}/invitations`, { role })) as {
    token: string;
  };
  await api(who, 'POST', '/v1/invitations/accept', { token: invitation.token });
  return teamToken;
}

/** Chooses the workspace in the switcher, and waits for the panel to have reloaded the profile it now acts in. */
async function switchTo(page: Page, workspaceId: string) {
  await page.locator('#workspace-switch').selectOption(workspaceId);
  await expect.poll(() => page.locator('.switcher').getAttribute('data-workspace')).toBe(workspaceId);
}

async function openWorkspacePage(page: Page) {
  await page.getByRole('link', { name: 'Workspace', exact: true }).click();
  await page.getByRole('heading', { name: 'Workspace', exact: true }).waitFor();
  await page.locator('table.members tbody tr').first().waitFor();
}

const meOf = async (page: Page) =>
  (await (await page.context().request.get(`${panel.baseUrl}/v1/me`)).json()) as {
    workspace: { id: string };
    role: string;
  };

describe.skipIf(!haveChromium)('the control panel: workspaces', { timeout: 90_000 }, () => {
  it(
    'the switcher moves the session to another workspace: the tasks, the plan, the credits, the role and a new ' +
      'token’s workspace are that workspace’s, and back',
    async () => {
      const me = await newAccount(panel.h, { plan: 'pro', credits: 7, scm: false });
      const boss = await newAccount(panel.h, { scm: false });
      const team = await teamOf(boss, 'Platform team', { plan: 'scale', credits: 42 });
      await join(boss, team, me, 'member');
      await insertJoblessTask(panel.h, me.workspace.id, { prompt: 'the personal task' });
      await insertJoblessTask(panel.h, team, { prompt: 'the team task' });

      const { context, page, pageErrors } = await panel.newPage();
      await signInWithKeyboard(page, me.token);
      await page.getByText('the personal task').waitFor();
      expect(await page.getByText('the team task').count()).toBe(0);
      const options = await page.locator('#workspace-switch option').allTextContents();
      expect(options).toHaveLength(2);
      expect(options).toContain('Platform team · member');

      await switchTo(page, team);
      await page.getByText('the team task').waitFor();
      expect(await page.getByText('the personal task').count()).toBe(0);
      expect(await meOf(page)).toMatchObject({ workspace: { id: team }, role: 'member' });

      await page.getByRole('link', { name: 'Account' }).click();
      await page.getByRole('heading', { name: 'Account' }).waitFor();
      expect(await page.getByTestId('credits').textContent()).toBe('42');
      expect(await page.getByTestId('plan').textContent()).toBe('scale');
      // a token made here acts in this workspace, narrowed to the scopes chosen
      await page.getByLabel('Name of the new token').fill('team reader');
      await page.getByRole('checkbox', { name: 'tasks:read' }).check();
      await page.getByRole('button', { name: 'Create token' }).click();
      const secret = await page.getByTestId('new-token').inputValue();
      const tokenRow = page.locator('table.tokens tr', { hasText: 'team reader' });
      await tokenRow.waitFor();
      expect(await tokenRow.textContent()).toContain('Platform team');
      expect(await tokenRow.textContent()).toContain('tasks:read');
      const bearer = { authorization: `Bearer ${secret}` };
      const asToken = await panel.h.app.inject({ method: 'GET', url: '/v1/me', headers: bearer });
      expect(asToken.json()).toMatchObject({ workspace: { id: team }, role: 'member' });
      const refused = await panel.h.app.inject({ method: 'GET', url: '/v1/me/keys', headers: bearer });
      expect(refused.statusCode).toBe(403);
      await openWorkspacePage(page);
      expect(await page.getByTestId('role').textContent()).toBe('member');
      expect(await page.getByTestId('workspace-name').textContent()).toBe('Platform team');
      expect(await page.getByTestId('workspace-credits').textContent()).toBe('42');
      await screenshot(page, 'workspace-member');

      // the choice is the session's: a reload keeps it
      await page.reload();
      await page.getByRole('heading', { name: 'Workspace', exact: true }).waitFor();
      expect(await page.getByTestId('role').textContent()).toBe('member');

      await switchTo(page, me.workspace.id);
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('owner');
      expect(await page.getByTestId('workspace-credits').textContent()).toBe('7');
      expect(await page.getByTestId('workspace-plan').textContent()).toBe('pro');
      expect(await meOf(page)).toMatchObject({ workspace: { id: me.workspace.id }, role: 'owner' });
      expect(pageErrors).toEqual([]);
      await context.close();
    },
  );

  it(
    'an owner makes a team workspace and invites a maintainer; the second account opens the link, signs in, ' +
      'accepts, and is in the members list with that role; the link works once',
    async () => {
      const owner = await newAccount(panel.h, { plan: 'pro', scm: false });
      const guest = await newAccount(panel.h, { plan: 'pro', scm: false });
      const a = await panel.newPage();
      await signInWithKeyboard(a.page, owner.token);
      await openWorkspacePage(a.page);
      // the personal workspace has no invitations and no leaving
      expect(await a.page.getByRole('heading', { name: 'Invitations' }).count()).toBe(0);
      expect(await a.page.getByRole('button', { name: 'Leave this workspace' }).count()).toBe(0);

      await a.page.getByLabel('Name of the new workspace').fill('Crew');
      await a.page.getByRole('button', { name: 'Create workspace' }).click();
      await expect.poll(() => a.page.getByTestId('workspace-name').textContent()).toBe('Crew');
      expect(await a.page.getByTestId('role').textContent()).toBe('owner');
      const crew = (await meOf(a.page)).workspace.id;
      expect(crew).not.toBe(owner.workspace.id);
      expect(await a.page.locator('.switcher').getAttribute('data-workspace')).toBe(crew);

      await a.page.getByLabel('Role', { exact: true }).selectOption('maintainer');
      await a.page.getByLabel('Email (a note, optional)').fill('guest@example.com');
      await a.page.getByRole('button', { name: 'Create invitation' }).click();
      const link = await a.page.getByTestId('invitation-link').inputValue();
      const secret = /\/app\/#\/invitation\/(inv_[A-Za-z0-9_-]{32})$/.exec(link)?.[1];
      expect(secret, link).toBeDefined();
      const pending = a.page.locator('table.invitations tr[data-state="pending"]');
      await pending.waitFor();
      expect(await pending.textContent()).toContain('guest@example.com');
      // the list carries no secret; after a reload the link is gone
      await a.page.reload();
      await a.page.locator('table.invitations tr[data-state="pending"]').waitFor();
      expect(await a.page.content()).not.toContain(secret);

      // the second account, in its own context: the link's page asks it to sign in first
      const b = await panel.newPage();
      await b.page.goto(`/app/#/invitation/${secret}`);
      await b.page.getByTestId('invited').waitFor();
      await b.page.getByLabel('Personal access token').fill(guest.token);
      await b.page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await b.page.getByRole('heading', { name: 'Join a workspace' }).waitFor();
      // opening the link joins nothing: only the click does
      expect(((await api(guest, 'GET', '/v1/workspaces')) as unknown[]).length).toBe(1);
      await b.page.getByRole('button', { name: 'Accept the invitation' }).click();
      expect(await b.page.getByTestId('joined').textContent()).toBe('You joined Crew as maintainer.');
      expect(b.page.url()).not.toContain(secret);
      await screenshot(b.page, 'invitation-accepted');
      await b.page.getByRole('button', { name: 'Switch to Crew' }).click();
      await b.page.getByRole('heading', { name: 'Workspace', exact: true }).waitFor();
      await expect.poll(() => b.page.getByTestId('role').textContent()).toBe('maintainer');
      expect(await b.page.locator('.switcher').getAttribute('data-workspace')).toBe(crew);

      // the owner sees the guest among the members, as a maintainer, and the invitation spent
      await a.page.reload();
      const row = a.page.locator(`table.members tr[data-member="${guest.account.id}"]`);
      await row.waitFor();
      expect(await row.getAttribute('data-role')).toBe('maintainer');
      expect(await row.textContent()).toContain(guest.account.email);
      await a.page.locator('table.invitations tr[data-state="accepted"]').waitFor();
      expect(await a.page.locator('table.invitations tr[data-state="pending"]').count()).toBe(0);
      await screenshot(a.page, 'workspace-owner');

      // the owner's controls: a role change, then a removal (the guest's session falls back to its own workspace)
      await a.page.getByLabel(`Role of ${guest.account.email}`).selectOption('member');
      await a.page.getByText(`${guest.account.email} is now member.`).waitFor();
      expect(await row.getAttribute('data-role')).toBe('member');
      a.page.once('dialog', (d) => void d.accept());
      await a.page.getByRole('button', { name: `Remove ${guest.account.email}` }).click();
      await a.page.getByText(`${guest.account.email} was removed.`).waitFor();
      expect(await row.count()).toBe(0);
      expect((await meOf(b.page)).workspace.id).toBe(guest.workspace.id);

      // once: the same link again is refused, in the API's words
      await b.page.goto(`/app/#/invitation/${secret}`);
      await b.page.getByRole('button', { name: 'Accept the invitation' }).click();
      const refused = b.page.getByRole('alert');
      await refused.waitFor();
      expect(await refused.textContent()).toContain('no such invitation, or it was used, revoked or has expired');

      // an invitation revoked is shown so
      await a.page.getByRole('button', { name: 'Create invitation' }).click();
      await a.page.getByTestId('invitation-link').waitFor();
      await a.page.getByRole('button', { name: 'Revoke the member invitation' }).click();
      await a.page.locator('table.invitations tr[data-state="revoked"]').waitFor();
      expect(await a.page.locator('table.invitations tr[data-state="pending"]').count()).toBe(0);
      expect([...a.pageErrors, ...b.pageErrors]).toEqual([]);
      await a.context.close();
      await b.context.close();
    },
  );

  it(
    'a viewer reads the tasks with nothing offered to do, sees the members without controls and the Account ' +
      'page without the workspace’s settings; a ' +
      'maintainer gets them for those below the owner, and a control left on a page after a demotion gets the ' +
      'API’s 403, in its words',
    async () => {
      const owner = await newAccount(panel.h, { plan: 'pro', scm: false });
      const viewer = await newAccount(panel.h, { scm: false });
      const maintainer = await newAccount(panel.h, { scm: false });
      const team = await teamOf(owner, 'Reviewers');
      const ownerTeam = await join(owner, team, viewer, 'viewer');
      await api(ownerTeam, 'POST', `/v1/workspaces/${team}/invitations`, { role: 'maintainer' }).then((inv) =>
        api(maintainer, 'POST', '/v1/invitations/accept', { token: (inv as { token: string }).token }),
      );

      const teamTask = await insertJoblessTask(panel.h, team, { prompt: 'a task of the reviewers' });

      const v = await panel.newPage();
      await signInWithKeyboard(v.page, viewer.token);
      await switchTo(v.page, team);
      // the viewer reads the team's tasks, and is offered nothing to do with them
      await v.page.getByText('a task of the reviewers').waitFor();
      expect(await v.page.getByRole('link', { name: 'New task' }).count()).toBe(0);
      await v.page.goto(`/app/tasks/${teamTask}`);
      await v.page.locator('.facts .badge').first().waitFor();
      expect(await v.page.getByRole('button', { name: 'Stop the task' }).count()).toBe(0);
      await openWorkspacePage(v.page);
      expect(await v.page.getByTestId('role').textContent()).toBe('viewer');
      expect(await v.page.locator('table.members tbody tr').count()).toBe(3);
      expect(await v.page.locator('table.members select').count()).toBe(0);
      expect(await v.page.getByRole('button', { name: /^Remove/ }).count()).toBe(0);
      expect(await v.page.getByRole('heading', { name: 'Invitations' }).count()).toBe(0);
      expect(await v.page.getByRole('button', { name: 'Leave this workspace' }).count()).toBe(1);
      await screenshot(v.page, 'workspace-viewer');

      // the Account page: one's tokens, and the workspace's settings neither shown nor asked for (no 403s)
      const settingsReads: string[] = [];
      v.page.on('request', (r) => {
        if (/^\/v1\/me\/(keys|webhooks|repos)/.test(new URL(r.url()).pathname)) settingsReads.push(r.url());
      });
      await v.page.getByRole('link', { name: 'Account' }).click();
      await v.page.getByRole('heading', { name: 'Personal access tokens' }).waitFor();
      await v.page.getByTestId('settings-by-role').waitFor();
      for (const heading of ['Model provider', 'Provider keys', 'Webhooks', 'Repository settings'])
        expect(await v.page.getByRole('heading', { name: heading }).count(), heading).toBe(0);
      expect(await v.page.getByRole('button', { name: /^Connect/ }).count()).toBe(0);
      await v.page.getByText('Not connected. The workspace’s owner connects it.').waitFor();
      expect(settingsReads).toEqual([]);
      expect(await v.page.getByRole('alert').count()).toBe(0);
      await openWorkspacePage(v.page);

      const m = await panel.newPage();
      await signInWithKeyboard(m.page, maintainer.token);
      await switchTo(m.page, team);
      await m.page.goto(`/app/tasks/${teamTask}`);
      await m.page.getByRole('button', { name: 'Stop the task' }).waitFor();
      await openWorkspacePage(m.page);
      expect(await m.page.getByTestId('role').textContent()).toBe('maintainer');
      const ownerRow = m.page.locator(`table.members tr[data-member="${owner.account.id}"]`);
      expect(await ownerRow.locator('select, button').count()).toBe(0);
      const selfRow = m.page.locator(`table.members tr[data-member="${maintainer.account.id}"]`);
      expect(await selfRow.locator('select, button').count()).toBe(0);
      const viewerRole = m.page.getByLabel(`Role of ${viewer.account.email}`);
      expect(await viewerRole.locator('option').allTextContents()).toEqual(['maintainer', 'member', 'viewer']);
      await m.page.getByRole('heading', { name: 'Invitations' }).waitFor();
      // a maintainer's Account page has the workspace's settings, but the code host is the owner's to connect
      await m.page.getByRole('link', { name: 'Account' }).click();
      await m.page.getByRole('heading', { name: 'Provider keys' }).waitFor();
      await m.page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      await m.page.getByText('Not connected. The workspace’s owner connects it.').waitFor();
      expect(await m.page.getByRole('button', { name: /^Connect/ }).count()).toBe(0);
      await openWorkspacePage(m.page);

      // the owner demotes the maintainer meanwhile; the page still shows the controls, the API refuses
      await api(ownerTeam, 'PATCH', `/v1/workspaces/${team}/members/${maintainer.account.id}`, { role: 'member' });
      await viewerRole.selectOption('member');
      const refused = m.page.getByRole('alert');
      await refused.waitFor();
      expect(await refused.textContent()).toContain('your role in this workspace or your token does not allow it');
      expect(await refused.textContent()).toContain('Server said: this needs the maintainer role in the workspace');
      const viewerRow = m.page.locator(`table.members tr[data-member="${viewer.account.id}"]`);
      expect(await viewerRow.getAttribute('data-role')).toBe('viewer');
      expect(await viewerRole.inputValue()).toBe('viewer');

      // the viewer leaves: back to the personal workspace
      v.page.once('dialog', (d) => void d.accept());
      await v.page.getByRole('button', { name: 'Leave this workspace' }).click();
      await v.page.getByRole('heading', { name: 'Tasks' }).waitFor();
      await expect.poll(async () => (await meOf(v.page)).workspace.id).toBe(viewer.workspace.id);
      await expect.poll(() => v.page.locator('#workspace-switch option').count()).toBe(1);
      expect([...v.pageErrors, ...m.pageErrors]).toEqual([]);
      await v.context.close();
      await m.context.close();
    },
  );

  it(
    'the owner exports the workspace, hands it to a member (staying as a maintainer, the owner’s controls gone), ' +
      'and deletes a workspace of their own (back to the personal one)',
    async () => {
      const owner = await newAccount(panel.h, { plan: 'pro', scm: false });
      const heir = await newAccount(panel.h, { scm: false });
      const team = await teamOf(owner, 'Handover');
      await join(owner, team, heir, 'member');

      const { context, page, pageErrors } = await panel.newPage();
      await signInWithKeyboard(page, owner.token);
      await switchTo(page, team);
      await openWorkspacePage(page);
      const exportLink = page.getByRole('link', { name: 'Export the workspace (JSON)' });
      const exported = await context.request.get(`${panel.baseUrl}${await exportLink.getAttribute('href')}`);
      expect(exported.status()).toBe(200);
      expect(await exported.text()).toContain(heir.account.email);

      page.once('dialog', (d) => void d.accept());
      await page.getByRole('button', { name: `Make ${heir.account.email} the owner` }).click();
      await page.getByText(`${heir.account.email} is now the owner.`).waitFor();
      await expect.poll(() => page.getByTestId('role').textContent()).toBe('maintainer');
      const heirRow = page.locator(`table.members tr[data-member="${heir.account.id}"]`);
      expect(await heirRow.getAttribute('data-role')).toBe('owner');
      expect(await heirRow.locator('select, button').count()).toBe(0);
      expect(await page.getByRole('button', { name: 'Delete this workspace' }).count()).toBe(0);
      expect(await exportLink.count()).toBe(0);
      await page.getByRole('button', { name: 'Leave this workspace' }).waitFor();

      await page.getByLabel('Name of the new workspace').fill('Scratch');
      await page.getByRole('button', { name: 'Create workspace' }).click();
      await expect.poll(() => page.getByTestId('workspace-name').textContent()).toBe('Scratch');
      const scratch = (await meOf(page)).workspace.id;
      page.once('dialog', (d) => void d.accept());
      await page.getByRole('button', { name: 'Delete this workspace' }).click();
      await page.getByRole('heading', { name: 'Tasks' }).waitFor();
      await expect.poll(() => page.locator('.switcher').getAttribute('data-workspace')).toBe(owner.workspace.id);
      const left = await page.locator('#workspace-switch option').allTextContents();
      expect(left).toHaveLength(2);
      expect(left.join('\n')).not.toContain('Scratch');
      const [gone] = await panel.h.deps.db.select().from(workspaces).where(eq(workspaces.id, scratch));
      expect(gone?.deletedAt).toBeInstanceOf(Date);
      expect(pageErrors).toEqual([]);
      await context.close();
    },
  );

  it('renders hostile workspace and member names as text', async () => {
    const hostile = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const owner = await newAccount(panel.h, { plan: 'pro', scm: false });
    const other = await newAccount(panel.h, { scm: false });
    await panel.h.deps.db
      .update(accounts)
      .set({ name: `${hostile} & <b>bold</b>` })
      .where(eq(accounts.id, other.account.id));
    const team = await teamOf(owner, hostile);
    await join(owner, team, other, 'member');

    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, owner.token);
    expect(await page.locator('#workspace-switch option').allTextContents()).toContain(`${hostile} · owner`);
    await switchTo(page, team);
    await openWorkspacePage(page);
    expect(await page.getByTestId('workspace-name').textContent()).toBe(hostile);
    const row = page.locator(`table.members tr[data-member="${other.account.id}"]`);
    expect(await row.locator('td').first().textContent()).toBe(`${hostile} & <b>bold</b>`);
    expect(await page.locator('main img, header img, main b, main script').count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
