import { posix } from 'node:path';
import { type HtmlDoc, at, attr, describe, isHtmlElement, rawText } from './html-doc.js';
import {
  type Finding,
  type SiteFiles,
  classifyRef,
  extensionOf,
  lineAt,
  lookupSitePath,
  suggestFile,
  textOf,
} from './site-files.js';
import { trackingHostOf } from './tracking.js';

/**
 * The link and asset checks of the static site check: every URL in the pages' attributes,
 * srcsets and CSS must point at a file (and fragment) of the site, stay on this host unless the
 * brief allows otherwise, and be no tracking pixel. Each problem is reported once per file.
 */

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

export interface LinkContext {
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
        message:
          `${where}${what} uses a "${ref.scheme}:" URL, which a static site cannot serve; use a relative path ` +
          `inside the site`,
      });
      return;
    case 'external': {
      if (trackingHostOf(ref.url)) return; // reported by the tracking scan, once
      if (ctx.allowExternal) return;
      const message = site.loads
        ? `${where}${what} loads ${ref.url} from another host (${ref.host}); the site must be self-contained: ` +
          `copy the file into the site and use a relative path, or drop it`
        : `${where}${what} links to ${ref.url} on another site (${ref.host}); external links are not allowed ` +
          `unless the brief asks for them: remove the link or point it at a page of this site`;
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
            message:
              `${where}${what} points at #${ref.fragment}, but no element on this page has id="${ref.fragment}"; ` +
              `add the id to the target section or fix the link`,
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
          message:
            `${where}${what} uses the root-relative path ${written.split(/[?#]/)[0]}; the site is published ` +
            `under a sub-path, where that misses the site: write it relative to this file ` +
            `(${relative}${(ref.path === '' || ref.path.endsWith('/')) && !relative.endsWith('/') ? '/' : ''})`,
        });
      }
      const found = lookupSitePath(ctx.files, ref.path);
      if (!found) {
        const hint = suggestFile(ctx.files, ref.path);
        push(ctx, {
          check: 'links',
          file,
          message:
            `${where}${what} points at /${ref.path}, which is not in the ` +
            `site${hint ? ` (did you mean ${relativeHint(file, hint)}?)` : '; add the file or fix the path'}`,
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
          message:
            `${where}${what} points at ${found.file}#${ref.fragment}, but ${found.file} has no element with ` +
            `id="${ref.fragment}"`,
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

export function htmlLinks(ctx: LinkContext, file: string, doc: HtmlDoc): void {
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
export function cssLinks(
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

export function trackingPixels(ctx: LinkContext, file: string, doc: HtmlDoc): void {
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
