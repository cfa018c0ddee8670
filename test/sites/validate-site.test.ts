import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ChromiumNotFoundError, chromiumPathFromEnv, launchChromium } from '../../src/sites/browser.js';
import {
  type SiteFiles,
  type SiteProblem,
  type SiteValidation,
  formatSiteProblems,
  validateSite,
} from '../../src/sites/validate-site.js';
import { brokenSite, goodSite } from './fixtures.js';

// Real headless Chromium (Debian's) through playwright-core; no database, so one leg only.
const chromiumPath = chromiumPathFromEnv();

/** Width and height from a PNG's IHDR chunk, after checking the signature. */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))).toBe(true);
  expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** Chromium processes this test process started and that are still alive. */
function chromiumChildren(): string[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there are no children
  }
  return out.split('\n').filter((l) => /chrom/i.test(l) && !/\bps\b/.test(l));
}

function find(
  result: SiteValidation,
  check: SiteProblem['check'],
  file: string | undefined,
  pattern: RegExp,
): SiteProblem {
  const hit = result.problems.find((p) => p.check === check && p.file === file && pattern.test(p.message));
  if (!hit)
    throw new Error(
      `no ${check} problem in ${file} matching ${pattern}; ` +
        `got:\n${formatSiteProblems(result.problems, { maxChars: 20_000 })}`,
    );
  return hit;
}

describe('site validation in headless Chromium', { timeout: 30_000 }, () => {
  it('passes a good site and returns desktop and phone screenshots', async () => {
    const result = await validateSite(goodSite(), { chromiumPath });
    expect(result.problems).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.stats.files).toBe(6);
    expect(result.stats.bytes).toBeGreaterThan(3000);
    expect(result.screenshots).not.toBeNull();
    const desktop = pngSize(result.screenshots?.desktop as Buffer);
    const mobile = pngSize(result.screenshots?.mobile as Buffer);
    expect(desktop.width).toBe(1280);
    expect(mobile.width).toBe(780); // 390 CSS px at device scale factor 2
    expect(desktop.height).toBeGreaterThan(800);
    expect(desktop.height).toBeLessThanOrEqual(4000);
    expect(mobile.height).toBeLessThanOrEqual(8000);
    expect(formatSiteProblems(result.problems)).toBe('The site passed validation.');
    expect(chromiumChildren()).toEqual([]);
  });

  it('reports every fault of a broken site with its file and what to do', async () => {
    const result = await validateSite(brokenSite(), { chromiumPath });
    expect(result.passed).toBe(false);
    expect(result.screenshots).not.toBeNull();

    // links: a missing page, a missing image, a bad fragment on the page and on another page, a missing CSS image
    expect(
      find(result, 'links', 'index.html', /href="pricing\.html".*\/pricing\.html, which is not in the site/).message,
    ).toMatch(/^line 15: /);
    find(result, 'links', 'index.html', /src="img\/hero\.png".*not in the site/);
    find(result, 'links', 'index.html', /#nowhere.*no element on this page has id="nowhere"/);
    find(
      result,
      'links',
      'index.html',
      /extra\.html#missing-section.*extra\.html has no element with id="missing-section"/,
    );
    find(result, 'links', 'css/site.css', /line 4: url\(img\/missing-bg\.png\) points at \/css\/img\/missing-bg\.png/);
    // the browser asked for the same image; it is reported once (the other mention is the missing alt)
    expect(result.problems.filter((p) => p.message.includes('img/hero.png'))).toHaveLength(2);
    // a file only a script asks for is found by the browser
    find(
      result,
      'links',
      'index.html',
      /the page requested \/data\/prices\.json \(from index\.html\), which is not in the site/,
    );

    // external script, tracking (the static snippet and the request the browser refused are one problem per thing)
    find(
      result,
      'external',
      'index.html',
      /line 8: <script src="https:\/\/cdn\.example\.com\/lib\.js"> loads .* from another host \(cdn\.example\.com\); .*copy the file into the site/,
    );
    find(result, 'tracking', 'index.html', /line 9: the tracker googletagmanager\.com.*remove it/);
    find(result, 'tracking', 'index.html', /gtag\(\) snippet/);
    expect(
      result.problems.filter((p) => p.check === 'tracking' && p.message.includes('googletagmanager.com')),
    ).toHaveLength(1);
    expect(result.problems.filter((p) => p.check === 'external' && p.message.includes('googletagmanager'))).toEqual([]);

    // accessibility
    find(result, 'accessibility', 'index.html', /<html> has no lang attribute; add .*lang="en"/);
    find(result, 'accessibility', 'index.html', /line 16: <img src="img\/hero\.png"> has no alt text/);
    find(
      result,
      'accessibility',
      'index.html',
      /line 17: <input name="q"> has no label \(a placeholder is not a label\)/,
    );
    find(result, 'accessibility', 'extra.html', /no <title>/);
    find(result, 'accessibility', 'extra.html', /no <h1>/);
    find(result, 'accessibility', 'extra.html', /no <meta name="viewport"/);
    find(result, 'accessibility', 'extra.html', /no lang attribute/);
    find(result, 'html', 'extra.html', /line 4: <div> is never closed/);

    // in the browser: the throwing script, the console error, low contrast, the too-wide box on a phone
    find(
      result,
      'script',
      'js/app.js',
      /uncaught TypeError: Cannot read properties of null \(reading 'start'\) \(at js\/app\.js:4:\d+\)/,
    );
    find(result, 'script', 'index.html', /console error \(at index\.html:20\): widget failed to start/);
    const contrast = find(
      result,
      'contrast',
      'index.html',
      /#c8c8c8 on #ffffff has a contrast of 1\.\d\d:1, below the 4\.5:1/,
    );
    expect(contrast.message).toContain('p.faint "This paragraph is light grey');
    find(
      result,
      'layout',
      'index.html',
      /390 px wide phone screen the page is 600 px wide.*div\.wide "This box is six hundred/,
    );

    const text = formatSiteProblems(result.problems);
    expect(text).toMatch(/^The site failed validation with \d+ problems\./);
    expect(text).toContain('\nBroken links and missing files:\n- index.html: line 15: <a href="pricing.html">');
    expect(chromiumChildren()).toEqual([]);
  });

  it('closes the browser when the page hangs, and when the caller aborts', async () => {
    const hanging: SiteFiles = { ...goodSite(), 'js/main.js': 'for (;;) {}\n' };
    hanging['index.html'] = (hanging['index.html'] as string).replace(
      '<script src="js/main.js" defer></script>',
      '<script src="js/main.js"></script>',
    );
    const started = Date.now();
    const result = await validateSite(hanging, { chromiumPath, timeoutMs: 4_000 });
    expect(Date.now() - started).toBeLessThan(12_000);
    expect(result.passed).toBe(false);
    expect(result.screenshots).toBeNull();
    find(
      result,
      'script',
      'index.html',
      /did not finish loading in time at (desktop|mobile) size: a script probably runs forever/,
    );
    expect(result.problems.filter((p) => p.check === 'script')).toHaveLength(1);
    expect(chromiumChildren()).toEqual([]);

    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('task cancelled')), 1_500);
    await expect(validateSite(hanging, { chromiumPath, timeoutMs: 20_000, signal: controller.signal })).rejects.toThrow(
      'task cancelled',
    );
    expect(chromiumChildren()).toEqual([]);
  });

  it('refuses to start without Chromium, naming the fix', async () => {
    expect(chromiumPathFromEnv({})).toBe('/usr/bin/chromium');
    expect(chromiumPathFromEnv({ EMEND_CHROMIUM_PATH: '/opt/chrome/chrome' })).toBe('/opt/chrome/chrome');
    await expect(launchChromium('/nonexistent/chromium')).rejects.toThrow(ChromiumNotFoundError);
    await expect(validateSite(goodSite(), { chromiumPath: '/nonexistent/chromium' })).rejects.toThrow(
      "headless Chromium not found at /nonexistent/chromium: install Debian's chromium or set EMEND_CHROMIUM_PATH",
    );
  });
});
