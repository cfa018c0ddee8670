import { posix } from 'node:path';
import { htmlProblems } from './check-html.js';
import {
  type Element,
  type HtmlDoc,
  ancestors,
  at,
  attr,
  describe,
  hasAttr,
  isHtmlElement,
  parseHtml,
  rawText,
  readableText,
} from './html-doc.js';
import {
  type Finding,
  type SiteFiles,
  badPathReason,
  byteLength,
  classifyRef,
  extensionOf,
  isHtmlPath,
  isTextPath,
  lineAt,
  lookupSitePath,
  suggestFile,
  textOf,
} from './site-files.js';
import { findTracking, trackingHostOf } from './tracking.js';

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

/** Attributes that hold one URL, by element; `loads` when the browser fetches it with the page. */
const URL_ATTRIBUTES: readonly { tag: string; attr: string; loads: boolean }[] = [
  { tag: 'a', attr: 'href', loads: false },
  { tag: 'area', attr: 'href', loads: false },
  { tag: 'link', attr: 'href', loads: true },
  { tag: 'script', attr: 'src', loads: true },
  { tag: 'img', attr: 'src', loads: true },
  { tag: 'source', attr: 'src', loads: true },
  { tag: 'video', attr: 'src', loads: true },
  { tag: 'video', attr: 'poster', loads: true },
  { tag: 'audio', attr: 'src', loads: true },
  { tag: 'track', attr: 'src', loads: true },
  { tag: 'iframe', attr: 'src', loads: true },
  { tag: 'embed', attr: 'src', loads: true },
  { tag: 'object', attr: 'data', loads: true },
  { tag: 'input', attr: 'src', loads: true },
  { tag: 'form', attr: 'action', loads: false },
  { tag: 'use', attr: 'href', loads: true },
  { tag: 'image', attr: 'href', loads: true },
  { tag: 'feimage', attr: 'href', loads: true },
];

/** link rel values that never fetch anything. */
const NON_LOADING_RELS = new Set([
  'canonical',
  'alternate',
  'author',
  'me',
  'license',
  'help',
  'next',
  'prev',
  'search',
  'bookmark',
]);

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
      message: `the site has no index.html at its root, so its address shows nothing${other ? ` (there is ${other}; move or rename it to index.html)` : ''}`,
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
    accessibility(file, doc, problems);
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
        message: `line ${lineAt(text, hit.offset)}: ${hit.what}: published sites carry no analytics, tracking or beacons; remove it`,
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
        message: `${kb(bytes)} is too big for one file (limit ${kb(L.maxFileBytes)}); shrink or simplify it (SVG instead of large images, less inline data)`,
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

interface LinkContext {
  files: SiteFiles;
  docs: Map<string, { text: string; doc: HtmlDoc }>;
  allowExternal: boolean;
  allowRootRelative: boolean;
  problems: Finding[];
  /** file + message, so a link repeated in a page is reported once. */
  seen: Set<string>;
}

function push(ctx: LinkContext, f: Finding): void {
  const key = `${f.file}\u0000${f.message.replace(/^line \d+(:\d+)?: /, '')}`;
  const refKey = f.ref ? `${f.file}\u0000${f.ref}` : undefined;
  if (ctx.seen.has(key) || (refKey && ctx.seen.has(refKey))) return;
  ctx.seen.add(key);
  if (refKey) ctx.seen.add(refKey);
  ctx.problems.push(f);
}

/** Where a URL came from, for the message. */
interface RefSite {
  file: string;
  /** `line 12: ` or ''. */
  where: string;
  /** `<img src="…">` or `url(…) in a style attribute`. */
  what: string;
  loads: boolean;
  /** The page's own ids, for same-document fragments (undefined in CSS files). */
  ids?: Set<string>;
}

function checkRef(ctx: LinkContext, site: RefSite, raw: string): void {
  const ref = classifyRef(site.file, raw);
  const { file, where, what } = site;
  switch (ref.kind) {
    case 'empty':
    case 'ignored':
      return;
    case 'bad-scheme':
      push(ctx, {
        check: 'links',
        file,
        message: `${where}${what} uses a "${ref.scheme}:" URL, which a static site cannot serve; use a relative path inside the site`,
      });
      return;
    case 'external': {
      if (trackingHostOf(ref.url)) return; // reported by the tracking scan, once
      if (ctx.allowExternal) return;
      const message = site.loads
        ? `${where}${what} loads ${ref.url} from another host (${ref.host}); the site must be self-contained: copy the file into the site and use a relative path, or drop it`
        : `${where}${what} links to ${ref.url} on another site (${ref.host}); external links are not allowed unless the brief asks for them: remove the link or point it at a page of this site`;
      push(ctx, { check: 'external', file, message, ref: `external:${ref.url}` });
      return;
    }
    case 'local': {
      if (ref.sameDocument) {
        if (ref.fragment === '' || ref.fragment.toLowerCase() === 'top' || !site.ids) return;
        if (!site.ids.has(ref.fragment)) {
          push(ctx, {
            check: 'links',
            file,
            message: `${where}${what} points at #${ref.fragment}, but no element on this page has id="${ref.fragment}"; add the id to the target section or fix the link`,
          });
        }
        return;
      }
      const written = raw.trim();
      if (!ctx.allowRootRelative && written.startsWith('/') && !written.startsWith('//')) {
        const dir = posix.dirname(file);
        const relative = posix.relative(dir === '.' ? '' : dir, ref.path) || './';
        push(ctx, {
          check: 'links',
          file,
          message: `${where}${what} uses the root-relative path ${written.split(/[?#]/)[0]}; the site is published under a sub-path, where that misses the site: write it relative to this file (${relative}${(ref.path === '' || ref.path.endsWith('/')) && !relative.endsWith('/') ? '/' : ''})`,
        });
      }
      const found = lookupSitePath(ctx.files, ref.path);
      if (!found) {
        const hint = suggestFile(ctx.files, ref.path);
        push(ctx, {
          check: 'links',
          file,
          message: `${where}${what} points at /${ref.path}, which is not in the site${hint ? ` (did you mean ${relativeHint(file, hint)}?)` : '; add the file or fix the path'}`,
          ref: `missing:/${ref.path}`,
        });
        return;
      }
      if (ref.fragment === '' || ref.fragment.toLowerCase() === 'top') return;
      const target = ctx.docs.get(found.file);
      let ids: Set<string> | undefined = target?.doc.ids;
      if (!target && extensionOf(found.file) === 'svg')
        ids = svgIds(textOf(ctx.files[found.file] as string | Buffer) ?? '');
      if (ids && !ids.has(ref.fragment)) {
        push(ctx, {
          check: 'links',
          file,
          message: `${where}${what} points at ${found.file}#${ref.fragment}, but ${found.file} has no element with id="${ref.fragment}"`,
        });
      }
    }
  }
}

function relativeHint(from: string, to: string): string {
  const dir = from.includes('/') ? from.slice(0, from.lastIndexOf('/') + 1) : '';
  return dir && to.startsWith(dir) ? to.slice(dir.length) : `/${to}`;
}

function svgIds(text: string): Set<string> {
  return new Set([...text.matchAll(/\sid\s*=\s*["']([^"']+)["']/g)].map((m) => m[1] ?? ''));
}

function htmlLinks(ctx: LinkContext, file: string, doc: HtmlDoc): void {
  for (const el of doc.elements) {
    const tag = el.tagName.toLowerCase();
    for (const spec of URL_ATTRIBUTES) {
      if (spec.tag !== tag) continue;
      const name = spec.attr;
      // SVG's <use> and <image> also take the old xlink:href (parse5 names it href with an xlink prefix).
      const value = attr(el, name);
      if (value === undefined) continue;
      if (tag === 'input' && attr(el, 'type')?.toLowerCase() !== 'image') continue;
      let loads = spec.loads;
      if (tag === 'link') {
        const rels = (attr(el, 'rel') ?? '').toLowerCase().split(/\s+/);
        if (rels.every((r) => NON_LOADING_RELS.has(r))) loads = false;
      }
      checkRef(ctx, { file, where: at(el, name), what: describe(el, name), loads, ids: doc.ids }, value);
    }
    for (const name of ['srcset', 'imagesrcset']) {
      const value = attr(el, name);
      if (value === undefined) continue;
      for (const url of srcsetUrls(value))
        checkRef(ctx, { file, where: at(el, name), what: describe(el, name), loads: true, ids: doc.ids }, url);
    }
    const style = attr(el, 'style');
    if (style)
      cssLinks(ctx, file, style, undefined, `the style attribute of ${describe(el)}`, doc.ids, at(el, 'style'));
    if (tag === 'style' && isHtmlElement(el)) {
      const { text, line } = rawText(el);
      cssLinks(ctx, file, text, line, 'a <style> block', doc.ids);
    }
  }
}

/** The URLs of a srcset: candidates separated by commas, each a URL and an optional descriptor. */
export function srcsetUrls(value: string): string[] {
  const urls: string[] = [];
  let i = 0;
  while (i < value.length) {
    while (i < value.length && /[\s,]/.test(value[i] as string)) i++;
    const start = i;
    while (i < value.length && !/\s/.test(value[i] as string)) i++;
    let url = value.slice(start, i);
    const trailing = /,+$/.exec(url);
    if (trailing) url = url.slice(0, url.length - trailing[0].length);
    else while (i < value.length && value[i] !== ',') i++;
    if (url) urls.push(url);
  }
  return urls;
}

/**
 * url(…) and @import in CSS. `firstLine` is where the CSS starts in its file (undefined for a
 * style attribute, whose line is `where`); fragment-only url(#id) points into the page (ids).
 */
function cssLinks(
  ctx: LinkContext,
  file: string,
  css: string,
  firstLine: number | undefined,
  inWhat: string,
  ids?: Set<string>,
  where = '',
): void {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' '));
  const pattern = /url\(\s*(?:"([^"]*)"|'([^']*)'|([^)'"\s]*))\s*\)|@import\s+(?:"([^"]*)"|'([^']*)')/gi;
  for (const m of text.matchAll(pattern)) {
    const url = m[1] ?? m[2] ?? m[3] ?? m[4] ?? m[5] ?? '';
    const line = firstLine === undefined ? where : `line ${firstLine + lineAt(text, m.index ?? 0) - 1}: `;
    const shown = m[0].length > 70 ? `${m[0].slice(0, 69)}…` : m[0];
    checkRef(ctx, { file, where: line, what: inWhat ? `${shown} in ${inWhat}` : shown, loads: true, ids }, url);
  }
}

function trackingPixels(ctx: LinkContext, file: string, doc: HtmlDoc): void {
  for (const el of doc.elements) {
    if (el.tagName !== 'img') continue;
    const src = attr(el, 'src') ?? '';
    if (!/^\s*(https?:)?\/\//i.test(src)) continue;
    const style = (attr(el, 'style') ?? '').replace(/\s/g, '').toLowerCase();
    const tiny = (n: string | undefined) => n !== undefined && Number.parseFloat(n) <= 1;
    const hidden =
      style.includes('display:none') ||
      style.includes('visibility:hidden') ||
      (/(^|;)width:[01]px/.test(style) && /(^|;)height:[01]px/.test(style));
    if ((tiny(attr(el, 'width')) && tiny(attr(el, 'height'))) || hidden) {
      const url = classifyRef(file, src);
      const ref = url.kind === 'external' ? `external:${url.url}` : undefined;
      push(ctx, {
        check: 'tracking',
        file,
        message: `${at(el)}${describe(el, 'src')} is a tracking pixel (a tiny or hidden remote image); remove it`,
        ref,
      });
    }
  }
}

const LABELLED_INPUT_EXEMPT = new Set(['hidden', 'submit', 'reset', 'button', 'image']);

function accessibility(file: string, doc: HtmlDoc, problems: Finding[]): void {
  const a11y = (message: string) => problems.push({ check: 'accessibility', file, message });
  const html = doc.elements.filter(isHtmlElement);
  const root = html.find((e) => e.tagName === 'html');
  if (!root || !(attr(root, 'lang') ?? '').trim())
    a11y(
      `${root ? at(root) : ''}<html> has no lang attribute; add the page's language, e.g. <html lang="en">, so screen readers pronounce it right`,
    );

  const title = html.find((e) => e.tagName === 'title');
  if (!title)
    a11y('the page has no <title>; add one inside <head> (it names the browser tab, bookmarks and search results)');
  else if (!readableText(title)) a11y(`${at(title)}the <title> is empty; give the page a short descriptive title`);

  if (!html.some((e) => e.tagName === 'h1')) a11y('the page has no <h1>; give it one main heading');

  const viewport = html.find((e) => e.tagName === 'meta' && attr(e, 'name')?.toLowerCase() === 'viewport');
  const content = (viewport && attr(viewport, 'content')?.toLowerCase().replace(/\s/g, '')) ?? '';
  if (!viewport || !content.includes('width=device-width')) {
    a11y(
      `${viewport ? at(viewport) : ''}no <meta name="viewport" content="width=device-width, initial-scale=1"> in <head>, so phones show a shrunken desktop page; add it`,
    );
  } else if (/user-scalable=(no|0)/.test(content) || /maximum-scale=(0|1)(\.0*)?(,|$)/.test(content)) {
    a11y(
      `${at(viewport)}the viewport meta stops people from zooming (user-scalable=no or maximum-scale=1); remove that part`,
    );
  }

  const labelFor = new Set(
    html
      .filter((e) => e.tagName === 'label')
      .map((e) => attr(e, 'for') ?? '')
      .filter(Boolean),
  );
  for (const el of html) {
    if (el.tagName === 'img' && !hasAttr(el, 'alt')) {
      a11y(
        `${at(el)}${describe(el, 'src')} has no alt text; describe the image in alt="…", or write alt="" if it is only decoration`,
      );
    }
    if (isFormControl(el) && !hasLabel(el, labelFor, doc.ids)) {
      const hint = attr(el, 'placeholder') ? ' (a placeholder is not a label)' : '';
      a11y(
        `${at(el)}${describe(el, 'name')} has no label${hint}; add <label for="its-id">, wrap it in a <label>, or give it aria-label`,
      );
    }
    if ((el.tagName === 'a' && hasAttr(el, 'href')) || el.tagName === 'button') {
      if (!readableText(el) && !named(el, doc.ids)) {
        a11y(
          `${at(el)}${describe(el, el.tagName === 'a' ? 'href' : undefined)} has no text a screen reader can read (icon only); add aria-label="…" or visually hidden text`,
        );
      }
    }
  }
  for (const el of doc.elements) {
    if (
      el.tagName === 'svg' &&
      attr(el, 'role') === 'img' &&
      !named(el, doc.ids) &&
      !el.childNodes.some((c) => c.nodeName === 'title')
    ) {
      a11y(`${at(el)}an <svg role="img"> has no name; add aria-label="…" or a <title> as its first child`);
    }
  }
}

function isFormControl(el: Element): boolean {
  if (el.tagName === 'select' || el.tagName === 'textarea') return true;
  return el.tagName === 'input' && !LABELLED_INPUT_EXEMPT.has((attr(el, 'type') ?? 'text').toLowerCase());
}

function named(el: Element, ids: Set<string>): boolean {
  if ((attr(el, 'aria-label') ?? '').trim()) return true;
  const by = (attr(el, 'aria-labelledby') ?? '').split(/\s+/).filter(Boolean);
  return by.length > 0 && by.every((id) => ids.has(id));
}

function hasLabel(el: Element, labelFor: Set<string>, ids: Set<string>): boolean {
  const id = attr(el, 'id');
  if (id && labelFor.has(id)) return true;
  if (ancestors(el).some((a) => a.tagName === 'label')) return true;
  return named(el, ids);
}
