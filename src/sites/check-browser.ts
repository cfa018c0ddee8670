import type { Browser, BrowserContext, Page, Request, Route } from 'playwright-core';
import { ONE_LINE, clip } from '../text/clip.js';
import { CONTRAST, type LowContrast, OVERFLOW, type Overflow, PAGE_HEIGHT, SCROLL_THROUGH } from './page-scripts.js';
import {
  type Finding,
  SITE_ORIGIN,
  type SiteFiles,
  contentTypeOf,
  lookupSitePath,
  sitePathOfUrl,
  toBuffer,
} from './site-files.js';
import { trackingHostOf } from './tracking.js';

/**
 * The checks that need a browser: the site is served from memory to headless Chromium, which
 * loads index.html at a desktop and a phone size. Every request to another host is refused
 * (and, unless the brief allowed external URLs, reported): the validator never lets a
 * generated page reach the network, whatever the brief says, so a page cannot make the
 * server fetch internal addresses.
 */

export const VIEWPORTS = {
  desktop: { viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1, isMobile: false, hasTouch: false },
  mobile: { viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true },
} as const;

/** Screenshots stop at this many CSS pixels of page height. */
export const SCREENSHOT_MAX_HEIGHT = 4000;

/** How long to let the page run after `load` for late errors (timers, deferred scripts). */
const SETTLE_MS = 250;

export interface BrowserCheckOptions {
  allowExternal: boolean;
  /** Epoch ms by which everything must be done. */
  deadline: number;
  signal?: AbortSignal;
}

export interface BrowserCheckResult {
  problems: Finding[];
  screenshots: { desktop: Buffer; mobile: Buffer } | null;
}

type ViewportName = keyof typeof VIEWPORTS;

class Deadline extends Error {}

/** Resolves with `p`, or rejects with Deadline when the deadline passes first. */
function within<T>(p: Promise<T>, deadline: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Deadline('deadline')), Math.max(0, deadline - Date.now()));
  });
  p.catch(() => {}); // the loser of the race must not become an unhandled rejection
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

export async function checkInBrowser(
  browser: Browser,
  files: SiteFiles,
  options: BrowserCheckOptions,
): Promise<BrowserCheckResult> {
  const problems: Finding[] = [];
  const seen = new Set<string>();
  const add = (f: Finding) => {
    const key = f.ref ?? `${f.check}\u0000${f.file ?? ''}\u0000${f.message}`;
    if (seen.has(key)) return;
    seen.add(key);
    problems.push(f);
  };
  const [desktop, mobile] = await Promise.all([
    runViewport(browser, files, 'desktop', options, add),
    runViewport(browser, files, 'mobile', options, add),
  ]);
  return { problems, screenshots: desktop && mobile ? { desktop, mobile } : null };
}

/**
 * Loads the site at one size, runs that size's checks and returns its screenshot (undefined when the page could not be
 * captured).
 */
async function runViewport(
  browser: Browser,
  files: SiteFiles,
  name: ViewportName,
  options: BrowserCheckOptions,
  add: (f: Finding) => void,
): Promise<Buffer | undefined> {
  const { deadline } = options;
  const size = VIEWPORTS[name];
  let context: BrowserContext | undefined;
  try {
    context = await within(browser.newContext({ ...size, serviceWorkers: 'block', acceptDownloads: false }), deadline);
    await context.route('**/*', (route) => serve(route, files, options, add));
    await context.routeWebSocket(/.*/, (socket) => {
      const problem = blocked(socket.url(), options.allowExternal, 'opens a WebSocket to');
      if (problem) add(problem);
      socket.close();
    });
    const page = await context.newPage();
    watchPage(page, files, add);

    const loaded = await page
      .goto(`${SITE_ORIGIN}/`, { waitUntil: 'load', timeout: Math.max(1, deadline - Date.now()) })
      .then(() => true)
      .catch((e: unknown) => {
        if (options.signal?.aborted) throw options.signal.reason;
        add({
          check: 'script',
          file: 'index.html',
          message: isTimeout(e)
            ? `index.html did not finish loading in time at ${name} size: a script probably runs forever (an ` +
              `endless loop) or the page waits for something that never arrives`
            : `index.html failed to load at ${name} size: ${clip(String((e as Error).message ?? e), 200, ONE_LINE)}`,
          ref: 'load-timeout',
        });
        return false;
      });
    if (!loaded) return undefined;

    await within(page.waitForTimeout(SETTLE_MS), deadline);
    await within(page.evaluate(SCROLL_THROUGH), deadline);
    if (name === 'desktop') contrastProblems(await within(page.evaluate<LowContrast[]>(CONTRAST), deadline), add);
    else overflowProblem(await within(page.evaluate<Overflow | null>(OVERFLOW), deadline), add);

    const height = Math.min(
      SCREENSHOT_MAX_HEIGHT,
      Math.max(1, Math.ceil(await within(page.evaluate<number>(PAGE_HEIGHT), deadline))),
    );
    return await within(
      page.screenshot({
        type: 'png',
        fullPage: true,
        clip: { x: 0, y: 0, width: size.viewport.width, height },
        animations: 'disabled',
        caret: 'hide',
        timeout: Math.max(1, deadline - Date.now()),
      }),
      deadline,
    );
  } catch (e) {
    if (options.signal?.aborted) throw options.signal.reason;
    if (e instanceof Deadline || isTimeout(e)) {
      add({
        check: 'script',
        file: 'index.html',
        message:
          `the page stopped responding at ${name} size before the checks finished: a script probably runs ` +
          `forever (an endless loop or an ever-growing timer chain)`,
        ref: 'unresponsive',
      });
      return undefined;
    }
    throw e;
  } finally {
    // A page stuck in a loop can keep context.close() waiting; closing the browser ends it anyway.
    if (context) await within(context.close(), Date.now() + 2_000).catch(() => {});
  }
}

function isTimeout(e: unknown): boolean {
  return e instanceof Error && (e.name === 'TimeoutError' || /Timeout \d+ms exceeded/.test(e.message));
}

/** Answers a request from the files map; refuses every other host. */
async function serve(
  route: Route,
  files: SiteFiles,
  options: BrowserCheckOptions,
  add: (f: Finding) => void,
): Promise<void> {
  const request = route.request();
  const url = request.url();
  const path = sitePathOfUrl(url);
  try {
    if (path === undefined) {
      const problem = blocked(url, options.allowExternal, 'requests', fileOf(files, request));
      if (problem) add(problem);
      await route.abort('blockedbyclient');
      return;
    }
    const found = lookupSitePath(files, path);
    if (!found) {
      // Browsers ask for /favicon.ico on their own when a page declares no icon.
      if (path !== 'favicon.ico') {
        const from = fileOf(files, request);
        add({
          check: 'links',
          file: from,
          message:
            `the page requested /${path}${from ? ` (from ${from})` : ''}, which is not in the site; add the file ` +
            `or fix the reference`,
          ref: `missing:/${path}`,
        });
      }
      await route.fulfill({ status: 404, contentType: 'text/plain; charset=utf-8', body: 'not found' });
      return;
    }
    await route.fulfill({
      status: 200,
      contentType: contentTypeOf(found.file),
      body: toBuffer(files[found.file] as string | Buffer),
    });
  } catch {
    // The page or context closed while the request was in flight.
  }
}

/** The problem for a request to another host, or undefined when the brief allowed it. */
function blocked(url: string, allowExternal: boolean, verb: string, file?: string): Finding | undefined {
  const tracker = trackingHostOf(url);
  if (tracker) {
    return {
      check: 'tracking',
      file,
      message: `the page ${verb} ${clip(url, 120, ONE_LINE)}, a known tracker (${tracker}); remove it`,
      ref: `tracking:${tracker}`,
    };
  }
  if (allowExternal) return undefined;
  let host = url;
  try {
    host = new URL(url).host;
  } catch {
    /* keep the URL */
  }
  return {
    check: 'external',
    file,
    message:
      `the page ${verb} ${clip(url, 120, ONE_LINE)} on another host (${host}); the site must work on its own: ` +
      `copy what it needs into the site or remove the request`,
    ref: `external:${url}`,
  };
}

/** The site file that made a request (the document for navigations, else the referrer). */
function fileOf(files: SiteFiles, request: Request): string | undefined {
  const referrer = request.headers().referer ?? (request.isNavigationRequest() ? undefined : request.frame().url());
  return referrer ? fileOfUrl(files, referrer) : undefined;
}

function fileOfUrl(files: SiteFiles, url: string): string | undefined {
  const path = sitePathOfUrl(url);
  if (path === undefined) return undefined;
  return lookupSitePath(files, path)?.file ?? (path || undefined);
}

/** Uncaught exceptions, console errors and dialogs. */
function watchPage(page: Page, files: SiteFiles, add: (f: Finding) => void): void {
  page.on('pageerror', (error) => {
    const frame = firstSiteFrame(error.stack ?? '', files);
    const what = `${error.name && !error.message.startsWith(error.name) ? `${error.name}: ` : ''}${error.message}`;
    add({
      check: 'script',
      file: frame?.file ?? 'index.html',
      message:
        `uncaught ${clip(what, 200, ONE_LINE)}${frame ? ` (at ${frame.file}:${frame.line}:${frame.column})` : ''}; ` +
        `fix the script so it runs without errors`,
    });
  });
  page.on('console', (message) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    // Failed requests are reported by the request handler, with the path.
    if (/^Failed to load resource/.test(text)) return;
    const location = message.location();
    const file = location.url ? fileOfUrl(files, location.url) : undefined;
    add({
      check: 'script',
      file: file ?? 'index.html',
      message:
        `console error${file ? ` (at ${file}:${location.lineNumber + 1})` : ''}: ${clip(text, 200, ONE_LINE)}; a ` +
        `finished site logs no errors`,
    });
  });
  page.on('dialog', (dialog) => {
    add({
      check: 'script',
      file: 'index.html',
      message: `the page opens a ${dialog.type()}() dialog ("${clip(dialog.message(), 60, ONE_LINE)}"); remove it`,
    });
    dialog.dismiss().catch(() => {});
  });
}

function firstSiteFrame(stack: string, files: SiteFiles): { file: string; line: string; column: string } | undefined {
  const escaped = SITE_ORIGIN.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  const m = new RegExp(`(${escaped}/[^\\s):]*):(\\d+):(\\d+)`).exec(stack);
  if (!m) return undefined;
  const file = fileOfUrl(files, m[1] ?? '') ?? 'index.html';
  return { file, line: m[2] ?? '', column: m[3] ?? '' };
}

/** Low-contrast text grouped by colour pair, a few examples each. */
function contrastProblems(found: LowContrast[], add: (f: Finding) => void): void {
  const groups = new Map<string, LowContrast[]>();
  for (const f of found) {
    const key = `${f.color} ${f.background} ${f.required}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  const sorted = [...groups.values()].sort((a, b) => (a[0]?.ratio ?? 0) - (b[0]?.ratio ?? 0));
  for (const group of sorted.slice(0, 5)) {
    const first = group[0] as LowContrast;
    const examples = group
      .slice(0, 3)
      .map((g) => `${g.element} "${clip(g.text, 40, ONE_LINE)}"`)
      .join(', ');
    const more = group.length > 3 ? ` and ${group.length - 3} more` : '';
    const size = first.required === 3 ? 'large text' : 'body text';
    add({
      check: 'contrast',
      file: 'index.html',
      message:
        `text in ${first.color} on ${first.background} has a contrast of ${first.ratio.toFixed(2)}:1, below ` +
        `the ${first.required}:1 that ${size} needs (${examples}${more}); darken the text or change its ` +
        `background`,
    });
  }
  if (sorted.length > 5)
    add({
      check: 'contrast',
      file: 'index.html',
      message: `… and ${sorted.length - 5} more low-contrast colour combinations`,
    });
}

function overflowProblem(found: Overflow | null, add: (f: Finding) => void): void {
  if (!found) return;
  const culprits = found.culprits
    .map(
      (c) =>
        `${c.element}${c.text ? ` "${clip(c.text, 30, ONE_LINE)}"` : ''} (${c.width} px wide, from x=${c.left} ` +
        `to x=${c.right})`,
    )
    .join('; ');
  add({
    check: 'layout',
    file: 'index.html',
    message:
      `on a ${found.viewport} px wide phone screen the page is ${found.pageWidth} px wide and scrolls ` +
      `sideways${culprits ? `; too wide: ${culprits}` : ''}; use max-width: 100%, flexible widths (%, fr, ` +
      `minmax()) or flex-wrap instead of fixed widths, and let long words wrap (overflow-wrap: anywhere)`,
  });
}
