import { describe, expect, it } from 'vitest';
import { srcsetUrls } from '../../src/sites/check-links.js';
import { SITE_LIMITS, checkStatic } from '../../src/sites/check-static.js';
import { type SiteFiles, type SiteProblem, formatSiteProblems } from '../../src/sites/validate-site.js';
import { goodSite } from './fixtures.js';

/** A page that passes the static checks, with `body` inside and `head` extra in <head>. */
function page(body: string, head = ''): string {
  return (
    `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, ` +
    `initial-scale=1"><title>T</title>${head}</head>
<body><h1>T</h1>
${body}
</body>
</html>
`
  );
}

function problems(files: SiteFiles, allowExternal = false): SiteProblem[] {
  return checkStatic(files, { allowExternal }).problems.map(({ check, file, message }) => ({ check, file, message }));
}

function messages(files: SiteFiles, check: SiteProblem['check'], allowExternal = false): string[] {
  return problems(files, allowExternal)
    .filter((p) => p.check === check)
    .map((p) => `${p.file ?? '-'}: ${p.message}`);
}

describe('static site checks', () => {
  it('finds nothing wrong with the good site', () => {
    expect(problems(goodSite())).toEqual([]);
    expect(checkStatic(goodSite()).loadable).toBe(true);
  });

  it('reports markup that does not mean what it says, and ignores the harmless errors', () => {
    const files = {
      'index.html':
        '<html lang="en"><head><meta name="viewport" ' +
        'content="width=device-width"><title>T</title></head>\n<body><h1>T</h1>\n<div/>text &nbps; &copy ' +
        '2025\n<p class="a" class="b">x</p>\n</span>\n<section><div>open</section>\n</body></html>\n',
    };
    const html = messages(files, 'html');
    expect(html).toEqual([
      'index.html: line 1: the page renders in quirks mode (no <!DOCTYPE html>, or an old doctype); make ' +
        '<!DOCTYPE html> the very first line',
      expect.stringMatching(
        /^index\.html: line 3:1: a self-closing non-void element such as <div\/>: HTML ignores the "\/"/,
      ),
      expect.stringMatching(/^index\.html: line 3:\d+: an unknown character reference .*&nbps;/),
      expect.stringMatching(/^index\.html: line 4:\d+: an attribute given twice/),
      expect.stringMatching(/^index\.html: line 3: <div> is never closed/),
      expect.stringMatching(/^index\.html: line 6: <div> is never closed/),
      'index.html: line 5: stray </span>: no <span> is open at that point (check the nesting of the tags before it)',
    ]);
    // `&copy 2025` (no semicolon) renders as meant: not reported
    expect(html.join('\n')).not.toMatch(/semicolon/);
    // end tags inside scripts, styles and comments are not markup
    expect(
      messages(
        { 'index.html': page('<script>if (a </b) {}</script><!-- </div> --><style>/* </p> */</style>') },
        'html',
      ),
    ).toEqual([]);
  });

  it('resolves relative, root-relative and directory links, and suggests the file meant', () => {
    const files: SiteFiles = {
      'index.html': page(
        '<a href="docs/">Docs</a> <a href="docs">Docs</a> <a href="./docs/guide.html?x=1#install">Guide</a> <a ' +
          'href="Img/Logo.svg">L</a> <a href="#top">Top</a> <a href="#">Top</a>',
      ),
      'docs/index.html': page(
        '<a href="../">Home</a> <a href="/docs/guide.html">Guide</a> <a href="../../../index.html">Up</a> <a ' +
          'href="guide.html#nope">Nope</a> <img src="logo.svg" alt="">',
      ),
      'docs/guide.html': page(
        '<h2 id="install">Install</h2><a name="legacy"></a><a href="index.html#">Docs</a> <a ' +
          'href="#legacy">Old anchor</a>',
      ),
      'img/logo.svg': '<svg xmlns="http://www.w3.org/2000/svg"><symbol id="mark"/></svg>',
    };
    expect(messages(files, 'links')).toEqual([
      'docs/index.html: line 5: <a href="guide.html#nope"> points at docs/guide.html#nope, but docs/guide.html ' +
        'has no element with id="nope"',
      'docs/index.html: line 5: <img src="logo.svg"> points at /docs/logo.svg, which is not in the site (did ' +
        'you mean /img/logo.svg?)',
      'index.html: line 5: <a href="Img/Logo.svg"> points at /Img/Logo.svg, which is not in the site (did you ' +
        'mean /img/logo.svg?)',
    ]);
    // SVG sprites: the fragment must name an id in the SVG file
    const sprite = {
      ...files,
      'index.html': page('<svg><use href="img/logo.svg#mark"></use><use xlink:href="img/logo.svg#gone"></use></svg>'),
    };
    expect(messages(sprite, 'links').filter((m) => m.startsWith('index.html'))).toEqual([
      'index.html: line 5: <use xlink:href="img/logo.svg#gone"> points at img/logo.svg#gone, but img/logo.svg ' +
        'has no element with id="gone"',
    ]);
  });

  it('reports root-relative URLs when the site is published under a sub-path', () => {
    const files = goodSite();
    expect(checkStatic(files, { allowRootRelative: false }).problems.map((p) => `${p.file}: ${p.message}`)).toEqual([
      'about/index.html: line 4: <a href="/"> uses the root-relative path /; the site is published under a ' +
        'sub-path, where that misses the site: write it relative to this file (../)',
      'index.html: line 12: <a href="/" class="brand"> uses the root-relative path /; the site is published ' +
        'under a sub-path, where that misses the site: write it relative to this file (./)',
    ]);
  });

  it('checks srcset, CSS url() and @import, style attributes and inline styles', () => {
    expect(srcsetUrls('a.png 1x, data:image/png;base64,AAA= 2x,c.png')).toEqual([
      'a.png',
      'data:image/png;base64,AAA=',
      'c.png',
    ]);
    expect(srcsetUrls(' a.png 1x,b.png 640w ')).toEqual(['a.png', 'b.png']);
    // as in browsers: a comma right after a URL is part of it (only trailing commas are cut)
    expect(srcsetUrls('a.png,b.png 2x')).toEqual(['a.png,b.png']);
    const files: SiteFiles = {
      'index.html': page(
        '<picture><source srcset="img/a.png 1x, img/b.png 2x"><img src="img/a.png" alt="A"></picture>\n<div ' +
          'style="background: url(\'img/c.png\')">x</div>\n<svg><rect fill="url(#grad)"/><path style="fill: ' +
          'url(#nogradient)"/><defs><linearGradient id="grad"/></defs></svg>',
        '<style>\n.hero { background: url("img/d.png"), url(data:image/png;base64,AAA=); }\n</style><link ' +
          'rel="stylesheet" href="css/site.css">',
      ),
      'css/site.css':
        '@import "base.css";\n/* url(commented-out.png) */\n.a { background: url(../img/a.png); }\n.b { ' +
        'background: url(/img/e.png) }\n',
      'css/base.css': 'body{}',
      'img/a.png': Buffer.from([0x89, 0x50, 0x4e, 0x47]),
    };
    expect(messages(files, 'links')).toEqual([
      'index.html: line 4: url("img/d.png") in a <style> block points at /img/d.png, which is not in the site; ' +
        'add the file or fix the path',
      'index.html: line 7: <source srcset="img/a.png 1x, img/b.png 2x"> points at /img/b.png, which is not in ' +
        'the site; add the file or fix the path',
      `index.html: line 8: url('img/c.png') in the style attribute of <div> points at /img/c.png, which is not ` +
        `in the site; add the file or fix the path`,
      'index.html: line 9: url(#nogradient) in the style attribute of <path> points at #nogradient, but no ' +
        'element on this page has id="nogradient"; add the id to the target section or fix the link',
      'css/site.css: line 4: url(/img/e.png) points at /img/e.png, which is not in the site; add the file or ' +
        'fix the path',
    ]);
  });

  it('reports external URLs unless the brief allows them; mailto and tel are always fine', () => {
    const files: SiteFiles = {
      'index.html': page(
        '<a href="https://twitter.com/lumen">Twitter</a> <a href="mailto:a@b.test">Mail</a> <a ' +
          'href="tel:+491">Call</a> <img src="//cdn.test/x.png" alt="x"> <a href="ftp://files.test/a">FTP</a>',
        '<link rel="stylesheet" href="https://fonts.googleapis.com/css2?family=Inter"><link rel="canonical" ' +
          'href="https://lumen.test/">',
      ),
    };
    const external = messages(files, 'external');
    expect(external).toHaveLength(4);
    expect(external[0]).toMatch(
      /^index\.html: line 3: <link href="https:\/\/fonts\.googleapis\.com\/css2\?family=Inter"> loads .* from another host \(fonts\.googleapis\.com\); the site must be self-contained/,
    );
    expect(external[1]).toMatch(
      /<link href="https:\/\/lumen\.test\/"> links to https:\/\/lumen\.test\/ on another site/,
    );
    expect(external[2]).toMatch(
      /line 5: <a href="https:\/\/twitter\.com\/lumen"> links to .* external links are not allowed unless the brief asks for them/,
    );
    expect(external[3]).toMatch(
      /<img src="\/\/cdn\.test\/x\.png"> loads https:\/\/cdn\.test\/x\.png from another host/,
    );
    expect(messages(files, 'links')).toEqual([
      'index.html: line 5: <a href="ftp://files.test/a"> uses a "ftp:" URL, which a static site cannot serve; ' +
        'use a relative path inside the site',
    ]);
    expect(messages(files, 'external', true)).toEqual([]);
  });

  it('reports tracking even when external URLs are allowed', () => {
    const files: SiteFiles = {
      'index.html': page(
        '<img src="https://px.example.test/p.gif?u=1" width="1" height="1" alt="">\n<img ' +
          'src="https://ads.test/t.gif" style="display: none" alt="">',
        '<script defer data-domain="lumen.test" src="https://plausible.io/js/script.js"></script>',
      ),
      'js/main.js':
        "window.addEventListener('unload', () => navigator.sendBeacon('/collect', " +
        "'bye'));\n_paq.push(['trackPageView']);\nnew Image().src = 'https://stats.test/hit?p=' + " +
        'location.pathname;\n',
    };
    const tracking = messages(files, 'tracking', true);
    expect(tracking).toEqual([
      'index.html: line 5: <img src="https://px.example.test/p.gif?u=1"> is a tracking pixel (a tiny or hidden ' +
        'remote image); remove it',
      'index.html: line 6: <img src="https://ads.test/t.gif"> is a tracking pixel (a tiny or hidden remote ' +
        'image); remove it',
      'index.html: line 3: the tracker plausible.io: published sites carry no analytics, tracking or beacons; ' +
        'remove it',
      'js/main.js: line 1: navigator.sendBeacon (sends data in the background): published sites carry no ' +
        'analytics, tracking or beacons; remove it',
      'js/main.js: line 2: a Matomo _paq snippet: published sites carry no analytics, tracking or beacons; remove it',
      'js/main.js: line 3: an image beacon (new Image().src = a remote URL): published sites carry no ' +
        'analytics, tracking or beacons; remove it',
    ]);
    // the pixels are not reported a second time as external images
    expect(messages(files, 'external')).toEqual([]);
  });

  it('checks labels, names and zoom', () => {
    const files: SiteFiles = {
      'index.html': page(
        [
          '<label for="a">A</label><input id="a">',
          '<label>B <textarea></textarea></label>',
          '<input aria-label="C">',
          '<span id="dl">D</span><select aria-labelledby="dl"></select>',
          '<input type="hidden" name="h"><input type="submit" value="Go">',
          '<input name="e" aria-labelledby="missing-id">',
          '<a href="/"><svg><path d="M0"/></svg></a>',
          '<a href="/" aria-label="Home"><svg><path d="M0"/></svg></a>',
          '<button><img src="data:image/png;base64,AAA=" alt="Search"></button>',
          '<svg role="img"><path d="M0"/></svg><svg role="img"><title>Logo</title></svg>',
        ].join('\n'),
        '',
      ).replace('width=device-width, initial-scale=1', 'width=device-width, initial-scale=1, maximum-scale=1'),
    };
    expect(messages(files, 'accessibility')).toEqual([
      'index.html: line 3: the viewport meta stops people from zooming (user-scalable=no or maximum-scale=1); ' +
        'remove that part',
      'index.html: line 10: <input name="e"> has no label; add <label for="its-id">, wrap it in a <label>, or ' +
        'give it aria-label',
      'index.html: line 11: <a href="/"> has no text a screen reader can read (icon only); add aria-label="…" ' +
        'or visually hidden text',
      'index.html: line 14: an <svg role="img"> has no name; add aria-label="…" or a <title> as its first child',
    ]);
  });

  it('needs an index.html, clean paths and a modest size', () => {
    const noIndex = checkStatic({ 'home/index.html': page('') });
    expect(noIndex.loadable).toBe(false);
    expect(noIndex.problems.map((p) => p.message)).toContain(
      'the site has no index.html at its root, so its address shows nothing (there is home/index.html; move or ' +
        'rename it to index.html)',
    );
    expect(
      messages(
        { 'index.html': page(''), 'a/../b.css': '', 'img/big.svg': 'x'.repeat(SITE_LIMITS.maxFileBytes + 1) },
        'size',
      ),
    ).toEqual([
      'img/big.svg: 1.0 MB is too big for one file (limit 1.0 MB); shrink or simplify it (SVG instead of large ' +
        'images, less inline data)',
    ]);
    expect(messages({ 'index.html': page(''), 'a/../b.css': '' }, 'links')).toEqual([
      "a/../b.css: the file name is not a clean relative path: it has an empty, '.' or '..' segment",
    ]);
    expect(messages({ 'index.html': Buffer.from([0xff, 0xfe, 0x00]) }, 'html')).toEqual([
      'index.html: the file is not valid UTF-8 text; save it as UTF-8',
    ]);
  });

  it('renders problems for the model, grouped and capped', () => {
    const many: SiteProblem[] = [
      ...Array.from({ length: 12 }, (_, i) => ({
        check: 'links' as const,
        file: 'index.html',
        message: `line ${i + 1}: broken ${i}`,
      })),
      { check: 'html', message: 'the site has no index.html at its root' },
      { check: 'contrast', file: 'index.html', message: 'too light' },
    ];
    const text = formatSiteProblems(many);
    expect(text.split('\n')).toEqual([
      'The site failed validation with 14 problems. Fix them all and keep everything else as it is.',
      '',
      'Markup:',
      '- the site has no index.html at its root',
      '',
      'Broken links and missing files:',
      ...Array.from({ length: 8 }, (_, i) => `- index.html: line ${i + 1}: broken ${i}`),
      '- … and 4 more like these',
      '',
      'Text contrast:',
      '- index.html: too light',
    ]);
    const short = formatSiteProblems(many, { maxChars: 200 });
    expect(short.length).toBeLessThanOrEqual(200);
    expect(short.endsWith('- … (list cut short)')).toBe(true);
  });
});
