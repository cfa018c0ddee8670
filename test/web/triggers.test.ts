import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { tasks, triggerDeliveries } from '../../src/db/schema.js';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/**
 * The account page's code-host triggers (in the repository settings) and the task page's origin line,
 * in headless Chromium against the service; the webhooks are registered on the harness's fake GitHub.
 */
const panel = servePanel(() => startHarness());

async function loadRepo(page: Page, url: string) {
  await page.getByLabel('Repository URL').fill(url);
  await page.getByRole('button', { name: 'Load' }).click();
}

/** A task made through the API on the repository (no worker runs here: it stays queued). */
async function apiTask(auth: Record<string, string>, repoUrl: string, prompt: string): Promise<string> {
  const created = await panel.h.app.inject({
    method: 'POST',
    url: '/v1/tasks',
    headers: auth,
    payload: { prompt, repo_url: repoUrl },
  });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().id;
}

describe.skipIf(!haveChromium)('the panel manages code-host triggers', { timeout: 90_000 }, () => {
  it('turns triggers on (the webhook at the URL shown), changes the label, shows deliveries, turns them off', async () => {
    const { token, auth, scm } = await newAccount(panel.h, { plan: 'pro', credits: 5 });
    const login = scm!.login;
    panel.h.github.createRepo(login, 'widgets');
    const repoUrl = `https://github.com/${login}/widgets`;
    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await loadRepo(page, repoUrl);
    const section = page.getByRole('region', { name: 'Triggers' });
    await expect.poll(() => section.getByTestId('triggers-state').textContent()).toBe('Triggers are off.');
    expect(await section.getByLabel('Mention', { exact: true }).inputValue()).toBe('@emend');
    expect(await section.getByLabel('Label', { exact: true }).inputValue()).toBe('emend');
    for (const name of ['Comments', 'Labels', 'Reviews'])
      expect(await section.getByRole('checkbox', { name }).isChecked()).toBe(true);
    expect(await section.getByLabel('CI follow-ups', { exact: true }).inputValue()).toBe('2');

    // on: comments and labels only
    await section.getByRole('checkbox', { name: 'Reviews' }).uncheck();
    await section.getByRole('button', { name: 'Turn triggers on' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Triggers are on');
    expect(await section.getByTestId('triggers-state').textContent()).toContain('Triggers are on');
    const hookUrl = await section.getByTestId('hook-url').textContent();
    const hooks = panel.h.github.hooks(login, 'widgets');
    expect(hooks).toHaveLength(1);
    expect(hooks[0]!.url).toBe(hookUrl);
    expect(await section.textContent()).toContain('The code host must be able to reach this address');
    expect(await section.textContent()).toContain('No deliveries yet.');
    // the scopes triggers need, said as docs/triggers.md and docs/code-host.md say them
    expect(await section.textContent()).toContain(
      'on GitHub a classic token with repo (or a fine-grained one with Webhooks and Issues read and write) from an admin of the repository',
    );
    expect(await page.content()).not.toContain(hooks[0]!.secret);
    const read = async () =>
      (
        await panel.h.app.inject({
          method: 'GET',
          url: `/v1/me/repos/triggers?repo=${encodeURIComponent(repoUrl)}`,
          headers: auth,
        })
      ).json();
    expect(await read()).toMatchObject({ mention: '@emend', label: 'emend', events: ['comments', 'labels'] });

    // Save is there for changed options only; a new label needs no new hook
    const save = section.getByRole('button', { name: 'Save triggers' });
    expect(await save.isDisabled()).toBe(true);
    await section.getByLabel('Label', { exact: true }).fill('autofix');
    await section.getByLabel('CI follow-ups', { exact: true }).selectOption('0');
    await save.click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('Triggers saved.');
    expect(await read()).toMatchObject({
      mention: '@emend',
      label: 'autofix',
      events: ['comments', 'labels'],
      ci_rounds: 0,
    });
    expect(panel.h.github.hooks(login, 'widgets')).toHaveLength(1);
    expect(await section.getByLabel('Label', { exact: true }).inputValue()).toBe('autofix');

    // the latest deliveries, as the receiving route records them, with a link to the task one started
    const triggerId = new URL(hookUrl!).pathname.split('/').pop()!;
    const taskId = await apiTask(auth, repoUrl, 'add() subtracts');
    const now = panel.h.clock.now().getTime();
    await panel.h.deps.db.insert(triggerDeliveries).values([
      {
        id: randomUUID(),
        triggerId,
        deliveryId: 'd-1',
        event: 'issue_comment',
        status: 'ignored',
        reason: 'the comment does not mention @emend',
        receivedAt: new Date(now - 60_000),
      },
      {
        id: randomUUID(),
        triggerId,
        deliveryId: 'd-2',
        event: 'issues',
        status: 'started',
        taskId,
        receivedAt: new Date(now),
      },
    ]);
    await loadRepo(page, repoUrl);
    const rows = section.locator('table.deliveries tbody tr');
    await expect.poll(() => rows.count()).toBe(2);
    const cells = async (n: number) => (await rows.nth(n).locator('td').allInnerTexts()).slice(0, 4);
    expect(await cells(0)).toEqual(['issues', 'started', '—', 'The task']);
    expect(await rows.nth(0).getByRole('link', { name: 'The task' }).getAttribute('href')).toBe(`/app/tasks/${taskId}`);
    expect(await cells(1)).toEqual(['issue_comment', 'ignored', 'the comment does not mention @emend', '—']);

    // off: the hook is removed from the code host
    await section.getByRole('button', { name: 'Turn triggers off' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('Triggers are off');
    expect(await section.getByTestId('triggers-state').textContent()).toBe('Triggers are off.');
    expect(panel.h.github.hooks(login, 'widgets')).toEqual([]);
    expect((await read()).error).toBe('not_found');
    expect(await section.getByRole('button', { name: 'Turn triggers on' }).isVisible()).toBe(true);
    expect(pageErrors).toEqual([]);
  });

  it('shows the refusal of a repository the connection may not manage the webhooks of', async () => {
    const { token, scm } = await newAccount(panel.h, { plan: 'pro' });
    const other = panel.h.github.addUser(`other-${randomUUID().slice(0, 8)}`);
    panel.h.github.createRepo(other.login, 'gadgets', { collaborators: [scm!.login] });
    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await loadRepo(page, `https://github.com/${other.login}/gadgets`);
    const section = page.getByRole('region', { name: 'Triggers' });
    await section.getByRole('button', { name: 'Turn triggers on' }).click();
    const alert = section.getByRole('alert');
    await alert.waitFor();
    expect(await alert.textContent()).toContain(
      `refused to add a webhook to ${other.login}/gadgets for your account: turning triggers on needs a connection ` +
        "that may manage the repository's webhooks (admin)",
    );
    expect(await section.getByTestId('triggers-state').textContent()).toBe('Triggers are off.');
    expect(panel.h.github.hooks(other.login, 'gadgets')).toEqual([]);
    // the 403 is the refusal (the page's error list leaves out 401/403/404 loads)
    expect(pageErrors).toEqual([]);
  });

  it("shows a task's origin on the code host, and none for a task made through the API", async () => {
    const { token, auth, scm } = await newAccount(panel.h, { plan: 'pro', credits: 5 });
    const login = scm!.login;
    panel.h.github.createRepo(login, 'origins');
    const repoUrl = `https://github.com/${login}/origins`;
    const asked = await apiTask(auth, repoUrl, 'fix the sum');
    const plain = await apiTask(auth, repoUrl, 'fix the product');
    const commentUrl = `${repoUrl}/issues/12#issuecomment-77`;
    await panel.h.deps.db
      .update(tasks)
      .set({
        trigger: {
          host: 'github',
          kind: 'comment',
          thread: 'issue',
          number: 12,
          commentUrl,
          actor: 'rita',
          triggerId: randomUUID(),
        },
      })
      .where(eq(tasks.id, asked));

    const { page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, token);
    await page.goto(`/app/tasks/${asked}`);
    const origin = page.getByTestId('task-origin');
    await origin.waitFor();
    expect((await origin.innerText()).trim()).toBe('Asked on GitHub by @rita in a comment on issue #12.');
    const link = origin.getByRole('link', { name: 'in a comment on issue #12' });
    expect(await link.getAttribute('href')).toBe(commentUrl);
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');

    await page.goto(`/app/tasks/${plain}`);
    await page.getByText('fix the product').waitFor();
    expect(await page.getByTestId('task-origin').count()).toBe(0);

    // A CI follow-up: what failed, and the round.
    const jobUrl = `${repoUrl}/actions/runs/5/job/6`;
    await panel.h.deps.db
      .update(tasks)
      .set({
        trigger: {
          ...{ host: 'github', kind: 'ci', thread: 'pull', number: 13, commentUrl: jobUrl, actor: 'octo' },
          ...{ triggerId: randomUUID(), ci: { sha: 'a1b2c3d4e5', jobs: [{ name: 'test' }], tests: [], round: 1 } },
        },
      })
      .where(eq(tasks.id, plain));
    await page.goto(`/app/tasks/${plain}`);
    const ci = page.getByTestId('task-origin');
    await ci.waitFor();
    expect((await ci.innerText()).replace(/\s+/g, ' ').trim()).toBe(
      'A CI follow-up on GitHub: the checks of pull request #13 failed on a1b2c3d (test), automatic round 1.',
    );
    expect(await ci.getByRole('link', { name: 'test' }).getAttribute('href')).toBe(jobUrl);
    expect(pageErrors).toEqual([]);
  });
});
