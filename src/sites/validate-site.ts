import type { Browser } from 'playwright-core';
import { launchChromium } from './browser.js';
import { checkInBrowser } from './check-browser.js';
import { type SiteLimits, checkStatic } from './check-static.js';
import { type Finding, type SiteCheck, type SiteFiles, type SiteProblem, byteLength } from './site-files.js';

export type { SiteCheck, SiteFiles, SiteProblem } from './site-files.js';
export type { SiteLimits } from './check-static.js';

/**
 * The gate a generated marketing site passes before it goes live. A failed validation goes
 * back to the model that wrote the site, so every problem says where it is and what to do.
 */

export interface SiteValidation {
  passed: boolean;
  problems: SiteProblem[];
  /** Full-page PNGs (height capped), or null when the browser checks did not run or could not capture the page. */
  screenshots: { desktop: Buffer; mobile: Buffer } | null;
  stats: { files: number; bytes: number };
}

export interface ValidateSiteOptions {
  chromiumPath: string;
  /** The brief asked for links or assets on other hosts. Requests to them are still never made. */
  allowExternal?: boolean;
  /** Budget for the browser checks, launch included (default 30 s). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Size limits, when not the defaults (SITE_LIMITS in check-static.ts). */
  limits?: Partial<SiteLimits>;
  /** false: report root-relative URLs (`/css/a.css`), for a site published under a sub-path. Default true. */
  allowRootRelative?: boolean;
}

export const DEFAULT_VALIDATE_TIMEOUT_MS = 30_000;

export async function validateSite(files: SiteFiles, options: ValidateSiteOptions): Promise<SiteValidation> {
  const { signal } = options;
  signal?.throwIfAborted();
  const stats = {
    files: Object.keys(files).length,
    bytes: Object.values(files).reduce((n, c) => n + byteLength(c), 0),
  };
  const allowExternal = options.allowExternal === true;
  const staticResult = checkStatic(files, {
    allowExternal,
    limits: options.limits,
    allowRootRelative: options.allowRootRelative,
  });
  const findings: Finding[] = [...staticResult.problems];
  let screenshots: SiteValidation['screenshots'] = null;

  // HTML always parses into a page (browsers recover the way parse5 does), so the browser runs
  // whenever there is an index.html to load, whatever the markup errors.
  if (staticResult.loadable) {
    const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_VALIDATE_TIMEOUT_MS);
    let browser: Browser | undefined;
    // One close, shared: an abort starts it at once, the finally waits for it to end.
    let closing: Promise<void> | undefined;
    const close = (b: Browser) => (closing ??= b.close().catch(() => {}));
    const onAbort = () => {
      if (browser) void close(browser);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      browser = await launchChromium(options.chromiumPath, { timeoutMs: Math.max(1, deadline - Date.now()) });
      signal?.throwIfAborted();
      const result = await checkInBrowser(browser, files, { allowExternal, deadline, signal });
      signal?.throwIfAborted();
      const known = new Set(findings.map((f) => f.ref).filter((r): r is string => r !== undefined));
      for (const f of result.problems) if (!f.ref || !known.has(f.ref)) findings.push(f);
      screenshots = result.screenshots;
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      throw e;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (browser) await close(browser);
    }
  }

  const problems = order(findings).map(({ check, file, message }) =>
    file === undefined ? { check, message } : { check, file, message },
  );
  return { passed: problems.length === 0, problems, screenshots, stats };
}

const CHECK_ORDER: readonly SiteCheck[] = [
  'html',
  'links',
  'script',
  'external',
  'tracking',
  'layout',
  'accessibility',
  'contrast',
  'size',
];

function order(findings: Finding[]): Finding[] {
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => CHECK_ORDER.indexOf(a.f.check) - CHECK_ORDER.indexOf(b.f.check) || a.i - b.i)
    .map(({ f }) => f);
}

const HEADINGS: Record<SiteCheck, string> = {
  html: 'Markup',
  links: 'Broken links and missing files',
  script: 'Script errors',
  external: 'External URLs (not allowed)',
  tracking: 'Tracking (not allowed)',
  layout: 'Layout on phones',
  accessibility: 'Accessibility',
  contrast: 'Text contrast',
  size: 'Size',
};

/**
 * The problems as a short text for the model that wrote the site: grouped by check, each line
 * `file: message`, at most `perCheck` lines a check and `maxChars` in all.
 */
export function formatSiteProblems(
  problems: readonly SiteProblem[],
  limits: { perCheck?: number; maxChars?: number } = {},
): string {
  if (problems.length === 0) return 'The site passed validation.';
  const perCheck = limits.perCheck ?? 8;
  const maxChars = limits.maxChars ?? 6_000;
  const lines: string[] = [
    `The site failed validation with ${problems.length} problem${problems.length === 1 ? '' : 's'}. Fix them ` +
      `all and keep everything else as it is.`,
  ];
  for (const check of CHECK_ORDER) {
    const group = problems.filter((p) => p.check === check);
    if (group.length === 0) continue;
    lines.push('', `${HEADINGS[check]}:`);
    for (const p of group.slice(0, perCheck)) lines.push(`- ${p.file ? `${p.file}: ` : ''}${p.message}`);
    if (group.length > perCheck) lines.push(`- … and ${group.length - perCheck} more like these`);
  }
  let text = lines.join('\n');
  if (text.length > maxChars) {
    const cut = text.lastIndexOf('\n', maxChars - 40);
    text = `${text.slice(0, cut > 0 ? cut : maxChars - 40)}\n- … (list cut short)`;
  }
  return text;
}
