import {
  type Element,
  type HtmlDoc,
  ancestors,
  at,
  attr,
  describe,
  hasAttr,
  isHtmlElement,
  readableText,
} from './html-doc.js';
import type { Finding } from './site-files.js';

/**
 * The accessibility basics of the static site check, per page: language, title, main heading,
 * viewport, alt texts, labels of form controls and names of icon-only links, buttons and SVGs.
 */

const LABELLED_INPUT_EXEMPT = new Set(['hidden', 'submit', 'reset', 'button', 'image']);

export function checkAccessibility(file: string, doc: HtmlDoc, problems: Finding[]): void {
  const a11y = (message: string) => problems.push({ check: 'accessibility', file, message });
  const html = doc.elements.filter(isHtmlElement);
  const root = html.find((e) => e.tagName === 'html');
  if (!root || !(attr(root, 'lang') ?? '').trim())
    a11y(
      `${root ? at(root) : ''}<html> has no lang attribute; add the page's language, e.g. <html lang="en">, so ` +
        `screen readers pronounce it right`,
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
      `${viewport ? at(viewport) : ''}no <meta name="viewport" content="width=device-width, initial-scale=1"> ` +
        `in <head>, so phones show a shrunken desktop page; add it`,
    );
  } else if (/user-scalable=(no|0)/.test(content) || /maximum-scale=(0|1)(\.0*)?(,|$)/.test(content)) {
    a11y(
      `${at(viewport)}the viewport meta stops people from zooming (user-scalable=no or maximum-scale=1); ` +
        `remove that part`,
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
        `${at(el)}${describe(el, 'src')} has no alt text; describe the image in alt="…", or write alt="" if it ` +
          `is only decoration`,
      );
    }
    if (isFormControl(el) && !hasLabel(el, labelFor, doc.ids)) {
      const hint = attr(el, 'placeholder') ? ' (a placeholder is not a label)' : '';
      a11y(
        `${at(el)}${describe(el, 'name')} has no label${hint}; add <label for="its-id">, wrap it in a <label>, ` +
          `or give it aria-label`,
      );
    }
    if ((el.tagName === 'a' && hasAttr(el, 'href')) || el.tagName === 'button') {
      if (!readableText(el) && !named(el, doc.ids)) {
        a11y(
          `${at(el)}${describe(el, el.tagName === 'a' ? 'href' : undefined)} has no text a screen reader can ` +
            `read (icon only); add aria-label="…" or visually hidden text`,
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
