import { type DefaultTreeAdapterTypes, type ParserError, parse } from 'parse5';

/** A parsed HTML page: parse5's tree, its elements in document order, the ids it defines and its parse errors. */

export type Element = DefaultTreeAdapterTypes.Element;
type Node = DefaultTreeAdapterTypes.Node;

export interface HtmlDoc {
  document: DefaultTreeAdapterTypes.Document;
  /** Every element, <template> contents included, in document order. */
  elements: Element[];
  /** Fragment targets: id attributes and <a name>. */
  ids: Set<string>;
  errors: ParserError[];
}

const HTML_NS = 'http://www.w3.org/1999/xhtml';

export function parseHtml(text: string): HtmlDoc {
  const errors: ParserError[] = [];
  const document = parse(text, { sourceCodeLocationInfo: true, onParseError: (e) => errors.push(e) });
  const elements: Element[] = [];
  const ids = new Set<string>();
  const visit = (node: Node): void => {
    if ('tagName' in node) {
      elements.push(node);
      const id = attr(node, 'id');
      if (id) ids.add(id);
      if (node.tagName === 'a' && attr(node, 'name')) ids.add(attr(node, 'name') ?? '');
      if (node.tagName === 'template' && 'content' in node)
        for (const c of (node as DefaultTreeAdapterTypes.Template).content.childNodes) visit(c);
    }
    if ('childNodes' in node) for (const c of node.childNodes) visit(c);
  };
  visit(document);
  return { document, elements, ids, errors };
}

export function attr(el: Element, name: string): string | undefined {
  return el.attrs.find((a) => a.name === name)?.value;
}

export function hasAttr(el: Element, name: string): boolean {
  return el.attrs.some((a) => a.name === name);
}

export function isHtmlElement(el: Element): boolean {
  return el.namespaceURI === HTML_NS;
}

/** 1-based line where the element (or one of its attributes) starts, when known. */
export function lineOf(el: Element, attribute?: string): number | undefined {
  const loc = el.sourceCodeLocation;
  if (!loc) return undefined;
  if (attribute) {
    const a = loc.attrs?.[attribute];
    if (a) return a.startLine;
  }
  return loc.startLine;
}

/** `line 12: ` or '' when the element was implied by the parser. */
export function at(el: Element, attribute?: string): string {
  const line = lineOf(el, attribute);
  return line === undefined ? '' : `line ${line}: `;
}

export function ancestors(el: Element): Element[] {
  const out: Element[] = [];
  let p = el.parentNode;
  while (p && 'tagName' in p) {
    out.push(p);
    p = p.parentNode;
  }
  return out;
}

/** The text a person reads inside an element (alt text of images and titles of inline SVGs included). */
export function readableText(el: Element): string {
  let out = '';
  const visit = (node: Node): void => {
    if (node.nodeName === '#text' && 'value' in node) out += node.value;
    else if ('tagName' in node) {
      if (node.tagName === 'img') out += ` ${attr(node, 'alt') ?? ''} `;
      const label = attr(node, 'aria-label');
      if (label && node !== el) out += ` ${label} `;
      if (node.tagName === 'script' || node.tagName === 'style' || attr(node, 'aria-hidden') === 'true') return;
      for (const c of node.childNodes) visit(c);
    }
  };
  visit(el);
  return out.replace(/\s+/g, ' ').trim();
}

/** The text directly inside an element, e.g. a <style> or <script>, with its starting line. */
export function rawText(el: Element): { text: string; line: number } {
  const first = el.childNodes.find((c) => c.nodeName === '#text');
  const text = el.childNodes.map((c) => (c.nodeName === '#text' && 'value' in c ? c.value : '')).join('');
  return { text, line: first?.sourceCodeLocation?.startLine ?? lineOf(el) ?? 1 };
}

/** A short, recognisable rendering of an element's start tag: `<img src="a.png">`. */
export function describe(el: Element, attribute?: string): string {
  const shown = ['id', 'class', attribute].filter((n): n is string => !!n);
  const parts = el.attrs
    .filter((a) => shown.includes(a.name))
    .map((a) => {
      const v = a.value.length > 60 ? `${a.value.slice(0, 59)}…` : a.value;
      return `${a.prefix ? `${a.prefix}:` : ''}${a.name}="${v}"`;
    });
  return `<${el.tagName}${parts.length ? ` ${parts.join(' ')}` : ''}>`;
}
