import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newAccount, startHarness } from '../support/harness.js';
import { type WebhookReceiver, startWebhookReceiver } from '../support/webhook-receiver.js';
import { haveChromium, screenshot, signInWithKeyboard } from './browser.js';
import { servePanel } from './served-panel.js';

/** The account page's webhooks section in headless Chromium, against the service and a real receiver. */
const panel = servePanel(() => startHarness({ EMEND_OUTBOUND_ALLOW: '127.0.0.1', EMEND_WEBHOOK_ALLOW_HTTP: 'on' }));
let rx: WebhookReceiver;

beforeAll(async () => {
  if (!haveChromium) return;
  rx = await startWebhookReceiver();
});
afterAll(async () => {
  await rx?.close();
});

describe.skipIf(!haveChromium)('the panel manages webhooks', { timeout: 60_000 }, () => {
  it('adds an endpoint (secret shown once), sends a test the receiver verifies, lists deliveries, pauses it', async () => {
    const { token } = await newAccount(panel.h, { plan: 'pro', scm: false });
    const { page, pageErrors } = await panel.newPage();
    await page.goto('/app/');
    await signInWithKeyboard(page, token);
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Endpoint URL').fill(rx.url);
    await page.getByLabel('task.awaiting_approval').check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const secret = await page.getByTestId('webhook-secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    const row = page.locator('table.webhooks tr', { hasText: rx.url });
    expect(await row.textContent()).toContain('task.done, task.failed, task.awaiting_approval');

    const before = rx.received.length;
    await row.getByRole('button', { name: 'Send a test' }).click();
    await expect.poll(() => rx.received.length).toBe(before + 1);
    expect(rx.verify(secret, rx.received[before]!).type).toBe('ping');
    await row.getByRole('button', { name: 'Deliveries' }).click();
    const delivery = page.locator('table.deliveries tbody tr').first();
    await expect.poll(() => delivery.textContent()).toContain('succeeded');
    expect(await delivery.textContent()).toContain('ping');
    await screenshot(page, 'account-webhooks');

    await page.getByRole('button', { name: 'I have copied it' }).click();
    expect(await page.getByTestId('webhook-secret').count()).toBe(0);
    await row.getByRole('button', { name: 'Pause' }).click();
    await expect.poll(() => row.locator('td').nth(2).textContent()).toBe('off');
    expect(await page.content()).not.toContain(secret);
    expect(pageErrors).toEqual([]);
  });
});
