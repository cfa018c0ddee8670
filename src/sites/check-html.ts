import type { ParserError } from 'parse5';
import type { HtmlDoc } from './html-doc.js';
import { ONE_LINE, clip } from '../text/clip.js';
import { lineAt } from './site-files.js';

/**
 * HTML well-formedness as it matters to a page's layout. parse5 recovers from every error the
 * way browsers do, so "parses" means: the recovery does not change what the author meant.
 *
 * Reported: tokenizer errors that change the tree or the text (`<div/>` opens a div that
 * swallows what follows, `&nbps;` shows up literally, a duplicate attribute is dropped,
 * unterminated comments and tags eat content), quirks mode (no or a legacy doctype: browsers
 * then lay the page out by old rules), elements left open (parse5 does not report
 * tree-construction errors, so they are found from the tree: a non-void element whose end tag
 * never came, other than those whose end tag HTML makes optional), and stray end tags.
 *
 * Ignored, because the browser ends up with what the author meant:
 * - missing-doctype / non-conforming-doctype: judged by the rendering mode instead (above).
 * - missing-semicolon-after-character-reference: `&copy 2025` still renders ©.
 * - end-tag-with-trailing-solidus, end-tag-with-attributes: the tag still closes its element.
 * - abandoned-head-element-child, misplaced-start-tag-for-head-element, disallowed-content-in-noscript-in-head:
 *   a <meta>, <link> or <style> after </head> (or in a head <noscript>) still applies.
 * - control-character-in-input-stream, noncharacter-in-input-stream: invisible code points.
 */
export const HARMLESS_PARSE_ERRORS: ReadonlySet<string> = new Set([
  'missing-doctype',
  'non-conforming-doctype',
  'missing-semicolon-after-character-reference',
  'end-tag-with-trailing-solidus',
  'end-tag-with-attributes',
  'abandoned-head-element-child',
  'misplaced-start-tag-for-head-element',
  'disallowed-content-in-noscript-in-head',
  'control-character-in-input-stream',
  'noncharacter-in-input-stream',
]);

const EXPLAIN: Record<string, string> = {
  'non-void-html-element-start-tag-with-trailing-solidus':
    'a self-closing non-void element such as <div/>: HTML ignores the "/", so the element stays open and ' +
    'swallows what follows; write <div></div>',
  'unknown-named-character-reference':
    'an unknown character reference (shown literally on the page); check its spelling (&nbsp; &amp; &copy; …)',
  'duplicate-attribute': 'an attribute given twice on one element; browsers keep only the first, merge them',
  'eof-in-comment': 'a comment that is never closed (missing -->), so everything after it is hidden',
  'eof-in-tag': 'the file ends inside a tag',
  'missing-attribute-value': 'an attribute with "=" but no value',
  'missing-whitespace-between-attributes': 'two attributes with no space between them',
  'unexpected-character-in-attribute-name':
    'a stray character (", \' or <) in an attribute name; check the quotes around the previous attribute value',
  'unexpected-character-in-unquoted-attribute-value':
    'a quote or "<" inside an unquoted attribute value; quote the value',
  'unexpected-equals-sign-before-attribute-name': 'an "=" where an attribute name should start',
  'unexpected-null-character': 'a NUL character',
  'incorrectly-opened-comment': 'a "<!" that does not start a comment (comments start with <!--)',
  'incorrectly-closed-comment': 'a comment closed with --!> instead of -->',
  'abrupt-closing-of-empty-comment': 'an empty comment <!--> or <!--->',
  'nested-comment': 'a comment inside a comment',
  'cdata-in-html-content': 'a CDATA section outside SVG/MathML; it becomes a comment',
  'invalid-first-character-of-tag-name': 'a "<" that does not start a tag; write &lt; for a literal "<"',
  'eof-before-tag-name': 'the file ends with a lone "<"',
  'missing-end-tag-name': 'an empty end tag </>',
  'unexpected-question-mark-instead-of-tag-name': 'a "<?" processing instruction; HTML turns it into a comment',
  'misplaced-doctype': 'a <!DOCTYPE> that is not at the start of the file',
};

/** Elements whose end tag HTML lets the author leave out. */
const OPTIONAL_END = new Set([
  'html',
  'head',
  'body',
  'p',
  'li',
  'dt',
  'dd',
  'option',
  'optgroup',
  'tr',
  'td',
  'th',
  'thead',
  'tbody',
  'tfoot',
  'colgroup',
  'caption',
  'rb',
  'rt',
  'rtc',
  'rp',
]);
const VOID = new Set([
  'area',
  'base',
  'br',
  'col',
  'embed',
  'hr',
  'img',
  'input',
  'link',
  'meta',
  'source',
  'track',
  'wbr',
  'param',
  'keygen',
  'frame',
]);
const RAW_TEXT = new Set([
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'plaintext',
]);

const MAX_PER_FILE = 10;

/** Messages (without the file name) for what is wrong with a page's markup. */
export function htmlProblems(text: string, doc: HtmlDoc): string[] {
  const out: string[] = [];
  if (doc.document.mode === 'quirks') {
    out.push(
      'line 1: the page renders in quirks mode (no <!DOCTYPE html>, or an old doctype); make <!DOCTYPE html> ' +
        'the very first line',
    );
  }
  for (const e of doc.errors) {
    if (HARMLESS_PARSE_ERRORS.has(e.code)) continue;
    out.push(`line ${e.startLine}:${e.startCol}: ${EXPLAIN[e.code] ?? e.code.replace(/-/g, ' ')}${near(text, e)}`);
  }
  out.push(...unclosed(doc), ...strayEndTags(text, doc));
  if (out.length > MAX_PER_FILE)
    return [...out.slice(0, MAX_PER_FILE), `… and ${out.length - MAX_PER_FILE} more markup errors`];
  return out;
}

function near(text: string, e: ParserError): string {
  const from = Math.max(0, e.startOffset - 10);
  const snippet = clip(text.slice(from, Math.max(e.endOffset, e.startOffset) + 20), 50, ONE_LINE);
  return snippet ? ` (near "${snippet}")` : '';
}

function unclosed(doc: HtmlDoc): string[] {
  const out: string[] = [];
  for (const el of doc.elements) {
    const loc = el.sourceCodeLocation;
    if (!loc?.startTag || loc.endTag || VOID.has(el.tagName) || OPTIONAL_END.has(el.tagName)) continue;
    if (el.namespaceURI !== 'http://www.w3.org/1999/xhtml') continue; // SVG children close with "/>" legitimately
    out.push(
      `line ${loc.startTag.startLine}: <${el.tagName}> is never closed (its </${el.tagName}> is missing or ` +
        `comes after a parent's end tag), so the elements after it end up inside it`,
    );
  }
  return out;
}

/** End tags in the source that closed nothing: the tree has no element that ends there. */
function strayEndTags(text: string, doc: HtmlDoc): string[] {
  const ends = new Set<number>();
  const skip: [number, number][] = [];
  for (const el of doc.elements) {
    const loc = el.sourceCodeLocation;
    if (!loc) continue;
    if (loc.endTag) ends.add(loc.endTag.startOffset);
    if (loc.startTag) skip.push([loc.startTag.startOffset, loc.startTag.endOffset]);
    if (RAW_TEXT.has(el.tagName) && loc.startTag)
      skip.push([loc.startTag.endOffset, loc.endTag?.startOffset ?? text.length]);
  }
  const comments = (node: { childNodes?: unknown[] }): void => {
    for (const c of (node.childNodes ?? []) as {
      nodeName: string;
      sourceCodeLocation?: { startOffset: number; endOffset: number } | null;
      childNodes?: unknown[];
    }[]) {
      if (c.nodeName === '#comment' && c.sourceCodeLocation)
        skip.push([c.sourceCodeLocation.startOffset, c.sourceCodeLocation.endOffset]);
      comments(c);
    }
  };
  comments(doc.document);
  for (const el of doc.elements)
    if (el.tagName === 'template' && 'content' in el)
      comments((el as unknown as { content: { childNodes: unknown[] } }).content);
  const out: string[] = [];
  for (const m of text.matchAll(/<\/([a-zA-Z][a-zA-Z0-9-]*)[^>]*>/g)) {
    const offset = m.index ?? 0;
    if (ends.has(offset) || skip.some(([a, b]) => offset >= a && offset < b)) continue;
    const name = (m[1] ?? '').toLowerCase();
    if (['html', 'head', 'body', 'br'].includes(name)) continue; // repeated or implied; harmless
    out.push(
      `line ${lineAt(text, offset)}: stray </${name}>: no <${name}> is open at that point (check the nesting ` +
        `of the tags before it)`,
    );
  }
  return out;
}
