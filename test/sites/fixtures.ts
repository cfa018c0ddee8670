import type { SiteFiles } from '../../src/sites/validate-site.js';

/** A small, clean marketing site: two pages, CSS, a script, inline and file SVGs, a form. */
export function goodSite(): SiteFiles {
  return {
    'index.html':
      `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Lumen — bright desk lamps</title>
  <link rel="stylesheet" href="css/site.css">
  <link rel="icon" href="img/logo.svg">
</head>
<body>
  <header class="top">
    <a href="/" class="brand"><img src="img/logo.svg" alt="Lumen" width="32" height="32"></a>
    <nav><ul><li><a href="#features">Features</a></li><li><a href="about/">About</a></li><li><a ` +
      `href="mailto:hello@lumen.test">Contact</a></li></ul></nav>
  </header>
  <main>
    <section class="hero">
      <h1>Light that follows your day</h1>
      <p>Lumen lamps shift from cool morning light to warm evening tones, on their own.</p>
      <a class="cta" href="#signup">Get early access</a>
    </section>
    <section id="features">
      <h2>Features</h2>
      <ul class="grid">
        <li><svg role="img" aria-label="Sun" width="40" height="40" viewBox="0 0 40 40"><circle cx="20" ` +
      `cy="20" r="10" fill="#f5a623"/></svg><p>Daylight tuning</p></li>
        <li><img src="img/moon.svg" alt="" width="40" height="40"><p>Night mode without blue ` +
      `light</p></li>
        <li><picture><source srcset="img/moon.svg 1x, img/logo.svg 2x" type="image/svg+xml"><img ` +
      `src="img/logo.svg" alt="Lamp" width="40" height="40"></picture><p>Quiet, solid aluminium</p></li>
      </ul>
    </section>
    <section id="signup">
      <h2>Get early access</h2>
      <form action="#signup">
        <label for="email">Email</label>
        <input id="email" type="email" name="email" placeholder="you@example.com">
        <label>Country <select name="country"><option>DE</option><option>FR</option></select></label>
        <button type="submit">Notify me</button>
      </form>
    </section>
  </main>
  <footer><p>&copy; 2025 Lumen &middot; <a href="tel:+4930123456">+49 30 123456</a></p></footer>
  <script src="js/main.js" defer></script>
</body>
</html>
`,
    'about/index.html':
      `<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, ` +
      `initial-scale=1"><title>About Lumen</title><link rel="stylesheet" href="../css/site.css"></head>
<body><main><h1>About us</h1><p>We make lamps in Berlin. <a href="../index.html#features">See the ` +
      `features</a> or go <a href="/">home</a>.</p></main></body>
</html>
`,
    'css/site.css':
      `/* Lumen */
:root { --ink: #1d1d1f; --paper: #fffdf8; }
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: var(--ink); background: var(--paper); }
.top { display: flex; justify-content: space-between; align-items: center; padding: 12px 20px; }
nav ul { display: flex; gap: 16px; list-style: none; margin: 0; padding: 0; }
a { color: #0b5cad; }
.hero { padding: 64px 20px; background: linear-gradient(#fff6e0, #ffe9b8); }
.hero h1 { font-size: 40px; margin: 0 0 12px; }
.cta { display: inline-block; padding: 10px 18px; background: #1d1d1f; color: #fff; border-radius: 6px; ` +
      `text-decoration: none; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 20px; list-style: ` +
      `none; padding: 20px; }
.brand img { display: block; }
#signup { padding: 20px; background-image: url("../img/moon.svg"); background-repeat: no-repeat; ` +
      `background-position: right top; background-color: #fffdf8; }
footer { padding: 20px; color: #555; }
`,
    'js/main.js': `document.querySelector('.cta').addEventListener('click', () => {
  document.getElementById('email').focus();
});
`,
    'img/logo.svg':
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" ' +
      'fill="#1d1d1f"/><circle cx="16" cy="16" r="7" fill="#ffd36b"/></svg>\n',
    'img/moon.svg': Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 40 40"><path d="M25 5a15 15 0 1 0 10 25A12 12 0 0 ' +
        '1 25 5z" fill="#4a5b8c"/></svg>\n',
    ),
  };
}

/**
 * A site with one of every fault the validator knows, each in a recognisable place:
 * index.html holds the markup, link, accessibility and browser faults; extra.html the missing
 * lang/title/h1/viewport ones.
 */
export function brokenSite(): SiteFiles {
  return {
    'index.html':
      `<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Broken on purpose</title>
  <link rel="stylesheet" href="css/site.css">
  <script src="https://cdn.example.com/lib.js"></script>
  <script async src="https://www.googletagmanager.com/gtag/js?id=G-123"></script>
  <script>window.dataLayer = window.dataLayer || []; function gtag(){ dataLayer.push(arguments); } ` +
      `gtag('config', 'G-123');</script>
</head>
<body>
  <h1>Broken</h1>
  <p class="faint">This paragraph is light grey on white and hard to read.</p>
  <p><a href="pricing.html">Pricing</a> <a href="#nowhere">Jump</a> <a ` +
      `href="extra.html#missing-section">Extra</a></p>
  <img src="img/hero.png">
  <form><input type="text" name="q" placeholder="Search"></form>
  <div class="wide">This box is six hundred pixels wide and does not fit a phone.</div>
  <script src="js/app.js"></script>
  <script>console.error('widget failed to start');</script>
</body>
</html>
`,
    'extra.html': `<!DOCTYPE html>
<html>
<head><meta charset="utf-8"></head>
<body><p id="intro">No title, no h1, no lang, no viewport.</p><div><section>unclosed</section></body>
</html>
`,
    'css/site.css': `body { margin: 0; font: 16px/1.5 sans-serif; color: #222; background: #fff; }
.faint { color: #c8c8c8; }
.wide { width: 600px; background: #eef; }
.hero { background: url(img/missing-bg.png); }
`,
    'js/app.js': `// a script that throws on load, after asking for a file that is not there
fetch('data/prices.json').catch(() => {});
const widget = null;
widget.start();
`,
  };
}
