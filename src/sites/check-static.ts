import { checkAccessibility } from './check-accessibility.js';
import { htmlProblems } from './check-html.js';
import { type LinkContext, cssLinks, htmlLinks, trackingPixels } from './check-links.js';
import { type HtmlDoc, parseHtml } from './html-doc.js';
import {
  type Finding,
  type SiteFiles,
  badPathReason,
  byteLength,
  extensionOf,
  isHtmlPath,
  isTextPath,
  lineAt,
  textOf,
} from './site-files.js';
import { findTracking } from './tracking.js';

/**
 * The checks that need no browser, over the site's files: markup, links and assets, external
 * URLs, tracking, accessibility basics and size.
 */

export interface StaticOptions {
  /** The brief asked for links or assets on other hosts. */
  allowExternal?: boolean;
  /** Overrides SITE_LIMITS (e.g. from the service's configuration). */
  limits?: Partial<SiteLimits>;
  /**
   * Whether root-relative URLs (`/css/site.css`) are fine (default true). A site published
   * under a sub-path (`/s/<slug>/`) needs relative ones: with false they are reported.
   */
  allowRootRelative?: boolean;
}

export interface SiteLimits {
  maxFiles: number;
  maxFileBytes: number;
  maxTotalBytes: number;
}

export interface StaticResult {
  problems: Finding[];
  /** index.html exists and is text, so the browser checks have a page to load. */
  loadable: boolean;
}

/** Default size limits: a generated marketing site is a handful of small files. */
export const SITE_LIMITS: Readonly<SiteLimits> = {
  maxFiles: 200,
  maxFileBytes: 1024 * 1024,
  maxTotalBytes: 5 * 1024 * 1024,
};

export function checkStatic(files: SiteFiles, options: StaticOptions = {}): StaticResult {
  const problems: Finding[] = [];
  const paths = Object.keys(files).sort();
  sizeAndPaths(files, paths, { ...SITE_LIMITS, ...options.limits }, problems);

  const docs = new Map<string, { text: string; doc: HtmlDoc }>();
  for (const file of paths.filter(isHtmlPath)) {
    const text = textOf(files[file] as string | Buffer);
    if (text === undefined) {
      problems.push({ check: 'html', file, message: 'the file is not valid UTF-8 text; save it as UTF-8' });
      continue;
    }
    docs.set(file, { text, doc: parseHtml(text) });
  }

  const index = docs.get('index.html');
  if (!Object.hasOwn(files, 'index.html')) {
    const other = paths.find((p) => /(^|\/)index\.html?$/i.test(p));
    problems.push({
      check: 'html',
      message:
        `the site has no index.html at its root, so its address shows ` +
        `nothing${other ? ` (there is ${other}; move or rename it to index.html)` : ''}`,
    });
  } else if (index && index.text.trim() === '') {
    problems.push({ check: 'html', file: 'index.html', message: 'index.html is empty' });
  }

  const ctx: LinkContext = {
    files,
    docs,
    allowExternal: options.allowExternal === true,
    allowRootRelative: options.allowRootRelative !== false,
    problems,
    seen: new Set(),
  };
  for (const [file, { text, doc }] of docs) {
    for (const message of htmlProblems(text, doc)) problems.push({ check: 'html', file, message });
    trackingPixels(ctx, file, doc);
    htmlLinks(ctx, file, doc);
    checkAccessibility(file, doc, problems);
  }
  for (const file of paths) {
    if (extensionOf(file) !== 'css') continue;
    const text = textOf(files[file] as string | Buffer);
    if (text !== undefined) cssLinks(ctx, file, text, 1, '');
  }
  for (const file of paths) {
    if (!isTextPath(file)) continue;
    const text = textOf(files[file] as string | Buffer);
    if (text === undefined) continue;
    const seen = new Set<string>();
    for (const hit of findTracking(text)) {
      if (seen.has(hit.what)) continue;
      seen.add(hit.what);
      problems.push({
        check: 'tracking',
        file,
        message:
          `line ${lineAt(text, hit.offset)}: ${hit.what}: published sites carry no analytics, tracking or ` +
          `beacons; remove it`,
        ref: hit.host ? `tracking:${hit.host}` : undefined,
      });
    }
  }
  return { problems, loadable: index !== undefined && index.text.trim() !== '' };
}

function sizeAndPaths(files: SiteFiles, paths: string[], L: SiteLimits, problems: Finding[]): void {
  if (paths.length > L.maxFiles)
    problems.push({ check: 'size', message: `the site has ${paths.length} files; keep it under ${L.maxFiles}` });
  let total = 0;
  for (const file of paths) {
    const bytes = byteLength(files[file] as string | Buffer);
    total += bytes;
    if (bytes > L.maxFileBytes) {
      problems.push({
        check: 'size',
        file,
        message:
          `${kb(bytes)} is too big for one file (limit ${kb(L.maxFileBytes)}); shrink or simplify it (SVG ` +
          `instead of large images, less inline data)`,
      });
    }
    const bad = badPathReason(file);
    if (bad) problems.push({ check: 'links', file, message: `the file name is not a clean relative path: ${bad}` });
  }
  if (total > L.maxTotalBytes)
    problems.push({ check: 'size', message: `the site is ${kb(total)} in all; keep it under ${kb(L.maxTotalBytes)}` });
}

const kb = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
