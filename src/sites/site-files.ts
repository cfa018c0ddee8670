import { posix } from 'node:path';

/**
 * The vocabulary the site checks share: a site is a map of relative, '/'-separated paths to
 * contents; a problem names its check, the file it is in and what to do about it.
 */

export type SiteFiles = Record<string, string | Buffer>;

export type SiteCheck =
  | 'html'
  | 'links'
  | 'external'
  | 'tracking'
  | 'accessibility'
  | 'contrast'
  | 'script'
  | 'layout'
  | 'size';

export interface SiteProblem {
  check: SiteCheck;
  /** The site file the problem is in, when there is one. */
  file?: string;
  /** What is wrong and what to do, for the model that wrote the site and for a person. */
  message: string;
}

/**
 * A problem as the checks produce it: `ref` names the thing it is about (`missing:/img/a.png`,
 * `external:https://…`) so the same fault seen by the static and the browser checks is
 * reported once. validate-site strips it.
 */
export interface Finding extends SiteProblem {
  ref?: string;
}

/** The origin the browser loads the site from; requests are answered from memory, never the network. */
export const SITE_ORIGIN = 'https://site.emend.invalid';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: 'application/json; charset=utf-8',
  webmanifest: 'application/manifest+json; charset=utf-8',
  map: 'application/json; charset=utf-8',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  xml: 'application/xml; charset=utf-8',
  svg: 'image/svg+xml; charset=utf-8',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  ogg: 'audio/ogg',
  wasm: 'application/wasm',
  pdf: 'application/pdf',
};

export function extensionOf(path: string): string {
  const base = path.slice(path.lastIndexOf('/') + 1);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

export function contentTypeOf(path: string): string {
  return TYPES[extensionOf(path)] ?? 'application/octet-stream';
}

export function isHtmlPath(path: string): boolean {
  const ext = extensionOf(path);
  return ext === 'html' || ext === 'htm';
}

const TEXT_EXTENSIONS = new Set([
  'html',
  'htm',
  'css',
  'js',
  'mjs',
  'json',
  'webmanifest',
  'txt',
  'md',
  'xml',
  'svg',
  'map',
]);

export function isTextPath(path: string): boolean {
  return TEXT_EXTENSIONS.has(extensionOf(path));
}

export function byteLength(content: string | Buffer): number {
  return typeof content === 'string' ? Buffer.byteLength(content) : content.length;
}

export function toBuffer(content: string | Buffer): Buffer {
  return typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of a file, or undefined when its bytes are not UTF-8. A leading BOM is dropped. */
export function textOf(content: string | Buffer): string | undefined {
  if (typeof content === 'string') return content.replace(/^\uFEFF/, '');
  try {
    return strictUtf8.decode(content).replace(/^\uFEFF/, '');
  } catch {
    return undefined;
  }
}

/** Why a file path is not a clean relative path, or undefined when it is one. */
export function badPathReason(path: string): string | undefined {
  if (path === '') return 'it is empty';
  if (path.includes('\\')) return "it contains '\\' (use '/')";
  if (path.startsWith('/')) return "it starts with '/' (paths are relative to the site root)";
  if (path.split('/').some((s) => s === '' || s === '.' || s === '..')) return "it has an empty, '.' or '..' segment";
  return undefined;
}

/**
 * The file a site path (already decoded, without leading '/', query or fragment) serves:
 * the file itself, or a directory's index.html (`''`, `about/`, and `about` when only
 * `about/index.html` exists). The browser check serves `about` directly rather than
 * redirecting to `about/` (Chromium under Playwright treats a page reached through a
 * fulfilled redirect as cross-origin), which only matters to relative URLs inside a page
 * embedded or fetched by such an address.
 */
export function lookupSitePath(files: SiteFiles, path: string): { file: string } | undefined {
  if (path === '' || path.endsWith('/')) {
    const file = `${path}index.html`;
    return Object.hasOwn(files, file) ? { file } : undefined;
  }
  if (Object.hasOwn(files, path)) return { file: path };
  const index = `${path}/index.html`;
  if (Object.hasOwn(files, index)) return { file: index };
  return undefined;
}

/** A nearby existing file to suggest for a missing path: same path in another case, else same file name elsewhere. */
export function suggestFile(files: SiteFiles, path: string): string | undefined {
  const names = Object.keys(files);
  const lower = path.toLowerCase();
  const sameCase = names.find((n) => n.toLowerCase() === lower);
  if (sameCase) return sameCase;
  const base = posix.basename(lower);
  if (base === '' || base === 'index.html') return undefined;
  return names.find((n) => posix.basename(n).toLowerCase() === base);
}

export type RefKind =
  | { kind: 'empty' }
  | { kind: 'ignored' }
  | { kind: 'external'; url: string; host: string }
  | { kind: 'bad-scheme'; scheme: string }
  | { kind: 'local'; path: string; fragment: string; sameDocument: boolean };

/**
 * What a URL written in `fromFile` points at, resolved the way a browser resolves it against
 * the page's address (so `../` above the root stays at the root, as it does on a real host).
 */
export function classifyRef(fromFile: string, raw: string): RefKind {
  const ref = raw.trim();
  if (ref === '') return { kind: 'empty' };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(ref)?.[1]?.toLowerCase();
  if (scheme && !['http', 'https'].includes(scheme)) {
    if (['mailto', 'tel', 'sms', 'data', 'blob', 'javascript', 'about'].includes(scheme)) return { kind: 'ignored' };
    return { kind: 'bad-scheme', scheme };
  }
  let url: URL;
  try {
    url = new URL(ref, `${SITE_ORIGIN}/${fromFile}`);
  } catch {
    return { kind: 'bad-scheme', scheme: scheme ?? 'invalid' };
  }
  if (url.origin !== SITE_ORIGIN) return { kind: 'external', url: url.href, host: url.host };
  let path: string;
  try {
    path = decodeURIComponent(url.pathname).slice(1);
  } catch {
    path = url.pathname.slice(1);
  }
  let fragment = url.hash.slice(1);
  try {
    fragment = decodeURIComponent(fragment);
  } catch {
    /* keep it as written */
  }
  const sameDocument = ref.startsWith('#');
  return { kind: 'local', path, fragment, sameDocument };
}

/** A URL a page asked for, parsed; undefined when it is not an absolute URL (nothing to match). */
export function parsedUrl(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}

/** The site file a request URL on SITE_ORIGIN asks for, as a decoded path without leading '/'. */
export function sitePathOfUrl(url: string): string | undefined {
  const u = parsedUrl(url);
  if (u?.origin !== SITE_ORIGIN) return undefined;
  try {
    return decodeURIComponent(u.pathname).slice(1);
  } catch {
    return u.pathname.slice(1);
  }
}

/** 1-based line of `offset` in `text`. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}
