import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import type { Harness } from '../support/harness.js';
import { haveChromium, launch, newPage } from './browser.js';
import { ensurePanelBuilt } from './build-panel.js';

/** What a panel test file runs against, once its beforeAll has run (read the fields inside tests). */
export interface ServedPanel<S> {
  /** What the file's start() made: the harness, or a service around one. */
  readonly service: S;
  /** The harness of that service. */
  readonly h: Harness;
  /** Where the service listens, on a real port: the panel is at `${baseUrl}/app/`. */
  readonly baseUrl: string;
  readonly browser: Browser;
  /** A fresh browser context on baseUrl, collecting the page's errors (see newPage in browser.ts). */
  newPage(): Promise<{ context: BrowserContext; page: Page; pageErrors: string[] }>;
}

/**
 * The set-up every panel file shares: the panel built, the service start() makes listening on a
 * real port, and Chromium; all closed after the file. Without Chromium nothing starts: the
 * file's describe.skipIf(!haveChromium) skips its tests. Call it at the top of the file.
 */
export function servePanel(start: () => Promise<Harness>): ServedPanel<Harness>;
export function servePanel<S extends { close(): Promise<void> }>(
  start: () => Promise<S>,
  harnessOf: (service: S) => Harness,
): ServedPanel<S>;
export function servePanel<S extends { close(): Promise<void> }>(
  start: () => Promise<S>,
  harnessOf: (service: S) => Harness = (service) => service as unknown as Harness,
): ServedPanel<S> {
  let service: S | undefined;
  let browser: Browser | undefined;
  let baseUrl: string | undefined;
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the panel is not served: read it inside a test, after beforeAll');
    return value;
  };
  beforeAll(async () => {
    if (!haveChromium) return;
    await ensurePanelBuilt();
    service = await start();
    baseUrl = await harnessOf(service).app.listen({ host: '127.0.0.1', port: 0 });
    browser = await launch();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });
  return {
    get service() {
      return ready(service);
    },
    get h() {
      return harnessOf(ready(service));
    },
    get baseUrl() {
      return ready(baseUrl);
    },
    get browser() {
      return ready(browser);
    },
    newPage: () => newPage(ready(browser), ready(baseUrl)),
  };
}
