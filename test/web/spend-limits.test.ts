import { describe, expect, it } from 'vitest';
import { newAccount, startHarness } from '../support/harness.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/**
 * Spend limits in the control panel (issue 48, point 2), in real headless Chromium: the Workspace
 * page shows the caps with what is used this month, the owner sets them there, and a cap at 80 %
 * or more shows as a notice at the top of the page.
 */
const panel = servePanel(() => startHarness());

describe.skipIf(!haveChromium)('the control panel: spend limits', { timeout: 90_000 }, () => {
  it('the owner sets the caps on the Workspace page; at 80 % and at 100 % of one a notice says so', async () => {
    panel.h.github.createRepo('psf', 'requests');
    const me = await newAccount(panel.h, { plan: 'scale', credits: 20 });
    const { context, page, pageErrors } = await panel.newPage();
    await signInWithKeyboard(page, me.token);
    await page.getByRole('link', { name: 'Workspace', exact: true }).click();
    await page.getByRole('heading', { name: 'Spend limits' }).waitFor();
    expect(await page.getByTestId('spend-usd').textContent()).toBe('$0.00 of no cap');
    expect(await page.getByTestId('spend-notices').count()).toBe(0);

    await page.getByLabel('Monthly model spend cap (USD; empty: no cap)').fill('25');
    await page.getByLabel('Monthly credit cap (empty: no cap)').fill('5');
    await page.getByRole('button', { name: 'Save spend limits' }).click();
    await page.getByText('Spend limits saved.').waitFor();
    expect(await page.getByTestId('spend-usd').textContent()).toBe('$0.00 of $25.00');
    expect(await page.getByTestId('spend-credits').textContent()).toBe('0 of 5');
    const limits = await panel.h.app.inject({
      method: 'GET',
      url: `/v1/workspaces/${me.workspace.id}/limits`,
      headers: me.auth,
    });
    expect(limits.json()).toMatchObject({ monthly_spend_cap_usd: 25, monthly_credit_cap: 5 });

    // Four tasks hold four of the five credits: 80 %.
    for (let i = 0; i < 4; i++) {
      const res = await panel.h.app.inject({
        method: 'POST',
        url: '/v1/tasks',
        headers: me.auth,
        payload: { prompt: `task ${i}`, repo_url: 'https://github.com/psf/requests' },
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    await page.reload();
    const notice = page.getByTestId('spend-notices');
    await notice.waitFor();
    expect(await notice.textContent()).toBe("This workspace's monthly credit cap is 80 % used (4 of 5 this month).");
    await screenshot(page, 'workspace-spend-notice');

    // The owner lowers the cap to what is used: the notice says it is reached.
    await page.getByLabel('Monthly credit cap (empty: no cap)').fill('4');
    await page.getByRole('button', { name: 'Save spend limits' }).click();
    await expect
      .poll(() => notice.textContent())
      .toBe("This workspace's monthly credit cap is reached (4 of 4 this month): new tasks are refused.");
    expect(pageErrors).toEqual([]);
    await context.close();
  });
});
