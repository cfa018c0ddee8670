/**
 * Scripts the browser check runs inside the page. They are plain JavaScript strings rather
 * than functions: page.evaluate serialises a function's source, and whatever compiled this
 * TypeScript (tsc, esbuild under vitest or tsx) may have added helpers to it that do not exist
 * in the page.
 */

/** Scrolls down the page (firing lazy loading and reveal-on-scroll code), back up, then finishes finite animations. */
/** A short CSS-like name of an element (tag#id.class), for problems a person can find in the page. */
const ELEMENT_NAME = `const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    const cls = [...el.classList].slice(0, 2);
    if (cls.length) s += '.' + cls.join('.');
    return s;
  };`;

export const SCROLL_THROUGH = `(async () => {
  const height = Math.min(document.documentElement.scrollHeight, 8000);
  const step = Math.max(200, Math.floor(window.innerHeight * 0.75));
  for (let y = 0; y < height; y += step) {
    window.scrollTo(0, y);
    await new Promise((r) => setTimeout(r, 25));
  }
  window.scrollTo(0, 0);
  await new Promise((r) => setTimeout(r, 50));
  for (const a of document.getAnimations()) { try { a.finish(); } catch { /* infinite */ } }
  return document.documentElement.scrollHeight;
})()`;

export interface LowContrast {
  element: string;
  text: string;
  color: string;
  background: string;
  ratio: number;
  required: number;
  fontSize: number;
  bold: boolean;
}

/**
 * Contrast of the page's running text against the colour behind it (WCAG 2 relative luminance).
 * Colours are read back through a 1×1 canvas, so any CSS colour syntax (oklch, color-mix …)
 * ends up as sRGB bytes. The background is found by walking up the ancestors and compositing
 * their background colours until an opaque one (the canvas is white when none is); text whose
 * walk meets a background image or gradient is skipped, since the colour behind it is unknown.
 * Headings, buttons, form controls, code and SVG are not "running text"; hidden, transparent,
 * and visually-hidden (≤1 px) text is skipped. Large text (≥24 px, or ≥18.66 px bold) needs 3:1,
 * the rest 4.5:1.
 */
export const CONTRAST =
  `(() => {
  const canvas = document.createElement('canvas');
  canvas.width = 1; canvas.height = 1;
  const ctx = canvas.getContext('2d', { willReadFrequently: true });
  const cache = new Map();
  const rgba = (c) => {
    if (cache.has(c)) return cache.get(c);
    ctx.clearRect(0, 0, 1, 1);
    ctx.fillStyle = 'rgba(0,0,0,0)';
    ctx.fillStyle = c;
    ctx.fillRect(0, 0, 1, 1);
    const d = ctx.getImageData(0, 0, 1, 1).data;
    const v = [d[0], d[1], d[2], d[3] / 255];
    cache.set(c, v);
    return v;
  };
  const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3]));
  const lum = (c) => {
    const ch = c.map((v) => { const s = v / 255; return s <= 0.04045 ? s / 12.92 : Math.pow((s + 0.055) / ` +
  `1.055, 2.4); });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };
  const hex = (c) => '#' + c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.backgroundImage && s.backgroundImage !== 'none') return null;
      const c = rgba(s.backgroundColor);
      if (c[3] > 0) { layers.push(c); if (c[3] >= 0.999) break; }
    }
    let base = [255, 255, 255];
    for (let i = layers.length - 1; i >= 0; i--) base = over(layers[i], base);
    return base;
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= parseFloat(getComputedStyle(e).opacity || '1');
    return o;
  };
  ${ELEMENT_NAME}
  const SKIP = ` +
  `'h1,h2,h3,h4,h5,h6,button,select,option,textarea,input,svg,code,pre,kbd,samp,script,style,noscript,template,[aria-hidden="true"]';
  const out = [];
  const seen = new Set();
  if (!document.body) return out;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const t = walker.currentNode;
    if (!t.data.trim()) continue;
    const el = t.parentElement;
    if (!el || seen.has(el)) continue;
    seen.add(el);
    if (el.closest(SKIP)) continue;
    if (el.checkVisibility && !el.checkVisibility({ opacityProperty: true, visibilityProperty: true, ` +
  `contentVisibilityAuto: true })) continue;
    const range = document.createRange();
    range.selectNodeContents(t);
    const rect = range.getBoundingClientRect();
    if (rect.width <= 1 || rect.height <= 1) continue;
    const s = getComputedStyle(el);
    const bg = background(el);
    if (!bg) continue;
    const fgRaw = rgba(s.color);
    const alpha = fgRaw[3] * opacity(el);
    if (alpha < 0.05) continue;
    const fg = over([fgRaw[0], fgRaw[1], fgRaw[2], alpha], bg);
    const l1 = lum(fg), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    const size = parseFloat(s.fontSize);
    const bold = parseInt(s.fontWeight, 10) >= 700;
    const required = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    if (ratio < required) {
      out.push({ element: name(el), text: (el.innerText || t.data).replace(/\\s+/g, ' ').trim().slice(0, 60), ` +
  `color: hex(fg), background: hex(bg), ratio: Math.floor(ratio * 100) / 100, required, fontSize: size, bold });
      if (out.length >= 200) break;
    }
  }
  return out;
})()`;

export interface Overflow {
  viewport: number;
  pageWidth: number;
  culprits: { element: string; text: string; left: number; right: number; width: number }[];
}

/**
 * Horizontal overflow: the page is wider than the viewport (so it scrolls sideways). The
 * culprits are the outermost elements reaching past either edge that no ancestor clips
 * (overflow other than visible); fixed elements do not scroll and are left out.
 */
export const OVERFLOW =
  `(() => {
  const root = document.documentElement;
  const vw = root.clientWidth;
  const pageWidth = Math.max(root.scrollWidth, document.body ? document.body.scrollWidth : 0);
  if (pageWidth <= vw + 1 || !document.body) return null;
  ${ELEMENT_NAME}
  const wide = new Set();
  const culprits = [];
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right <= vw + 1 && r.left >= -1) continue;
    const s = getComputedStyle(el);
    if (s.position === 'fixed' || s.display === 'none') continue;
    let clipped = false;
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      if (getComputedStyle(a).overflowX !== 'visible') { clipped = true; break; }
    }
    if (clipped) continue;
    wide.add(el);
    if (el.parentElement && wide.has(el.parentElement)) continue;
    culprits.push({ element: name(el), text: (el.innerText || '').replace(/\\s+/g, ' ').trim().slice(0, 40), ` +
  `left: Math.round(r.left), right: Math.round(r.right), width: Math.round(r.width) });
  }
  culprits.sort((a, b) => b.right - a.right);
  return { viewport: vw, pageWidth, culprits: culprits.slice(0, 3) };
})()`;

/** The height to capture: the page's, capped. */
export const PAGE_HEIGHT = `Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)`;
