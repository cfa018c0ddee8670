import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { expect } from 'vitest';
import { CHROMIUM, available, requirements } from '../support/requirements.js';

export { CHROMIUM };
/** Under CI a missing Chromium fails the panel's files; elsewhere they are skipped with a notice. */
export const haveChromium = available(requirements.chromium());

export const ARTIFACTS = resolve(import.meta.dirname, '../../test-artifacts/panel');

/** Debian's Chromium, headless, as the brief says: never a downloaded browser. */
export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}

export async function newPage(
  browser: Browser,
  baseUrl: string,
): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const pageErrors: string[] = [];
  page.on('pageerror', (err) => pageErrors.push(err.message));
  // CSP violations and failed loads show up as console errors
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of 40[134]/.test(msg.text())) pageErrors.push(msg.text());
  });
  return { context, page, pageErrors };
}

export async function screenshot(page: Page, name: string) {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Presses Tab until the focused element matches `selector`: proves it is reachable by keyboard. */
export async function tabTo(page: Page, selector: string, max = 40) {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`${selector} was not reached with ${max} presses of Tab`);
}

/** Signs in on the sign-in page by keyboard only: Tab to the token field, type, Enter. */
export async function signInWithKeyboard(page: Page, token: string) {
  await page.goto('/app/');
  await expect.poll(() => page.getByRole('heading', { name: 'Sign in to emend' }).count()).toBe(1);
  await tabTo(page, '#token');
  await page.keyboard.type(token);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { name: 'Tasks' }).waitFor();
}
