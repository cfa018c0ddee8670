import { editBlock, stepOf } from './fix-script.js';
import type { Reply, ScriptedModel } from './scripted-model/server.js';

export const BAKERY_BRIEF =
  'A one-page site for Crumb & Co, a neighbourhood sourdough bakery in Leeds: opening hours, what we bake, and ' +
  'how to order ahead.';

export const BAKERY_PLAN = {
  refusal: '',
  title: 'Crumb & Co',
  tagline: 'Slow-proved sourdough, baked every morning in Leeds',
  audience: 'Neighbours who want good bread; they should order ahead or drop by.',
  sections: [
    {
      id: 'bakes',
      heading: 'What we bake',
      purpose: 'Show the range',
      copy: 'Country loaves, seeded rye and cardamom buns.',
    },
    { id: 'hours', heading: 'Opening hours', purpose: 'When to come', copy: 'Tuesday to Saturday, 7am to 2pm.' },
  ],
  palette: { background: '#fffaf3', surface: '#ffffff', text: '#2b2118', accent: '#8a3b12', accent_text: '#ffffff' },
  typography: { headings: 'Georgia, serif', body: 'system-ui, sans-serif' },
};

const page = (extra: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Crumb &amp; Co</title>
<link rel="stylesheet" href="styles.css">
</head>
<body>
<header><h1>Crumb &amp; Co</h1><p>Slow-proved sourdough, baked every morning in Leeds.</p></header>
<main>
<section id="bakes"><h2>What we bake</h2><p>Country loaves, seeded rye and cardamom buns.</p>
<img src="loaf.svg" alt="A round sourdough loaf" width="120" height="120"></section>
<section id="hours"><h2>Opening hours</h2><p>Tuesday to Saturday, 7am to 2pm.</p></section>
${extra}
</main>
<footer><p>12 Oven Lane, Leeds · <a href="mailto:hello@crumb.example">hello@crumb.example</a></p></footer>
</body>
</html>`;

const CSS = `body { margin: 0; font-family: system-ui, sans-serif; background: #fffaf3; color: #2b2118; }
header, main, footer { max-width: 40rem; margin: 0 auto; padding: 1rem; }
h1, h2 { font-family: Georgia, serif; }
a { color: #8a3b12; }
img { max-width: 100%; height: auto; }
`;

const SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 120 120"><circle cx="60" cy="60" r="50" ' +
  'fill="#c98b4a"/></svg>\n';

const create = (path: string, content: string) => editBlock('', content.replace(/\n$/, ''), path);

/** First answer: the site, with a link to an order page that does not exist. */
export const SITE_WITH_BROKEN_LINK = [
  'Here is the site.',
  create('index.html', page('<p><a href="order.html">Order ahead</a></p>')),
  create('styles.css', CSS),
  create('loaf.svg', SVG),
].join('\n');

/** The correction after validation: the order page exists now. */
export const ORDER_PAGE = [
  'Added the order page the home page links to.',
  create(
    'order.html',
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<meta name="viewport" ' +
      'content="width=device-width, initial-scale=1">\n<title>Order ahead · Crumb &amp; Co</title>\n<link ' +
      'rel="stylesheet" href="styles.css">\n</head>\n<body>\n<main><h1>Order ahead</h1><p>Call 0113 000 0000 by ' +
      '4pm the day before, or <a href="mailto:hello@crumb.example">write to us</a>.</p><p><a ' +
      'href="index.html">Back home</a></p></main>\n</body>\n</html>',
  ),
].join('\n');

/** Scaffold steps answered from a script: the plan, then the fixer's answers in order (the last repeats). */
export function scriptSiteRun(
  model: ScriptedModel,
  fixes: string[] = [SITE_WITH_BROKEN_LINK, ORDER_PAGE],
  plan: Record<string, unknown> = BAKERY_PLAN,
) {
  let n = 0;
  model.respond((req): Reply | undefined => {
    const step = stepOf(req);
    if (step === 'planner') return { json: plan };
    if (step === 'fixer') return { text: fixes[Math.min(n++, fixes.length - 1)]! };
    return undefined;
  });
  return { fixerCalls: () => model.calls.filter((c) => stepOf(c) === 'fixer') };
}
