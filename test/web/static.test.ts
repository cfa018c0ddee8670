import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Deps } from '../../src/deps.js';
import { PANEL_CSP, panelRoutes } from '../../src/http/routes/panel.js';
import { type Harness, startHarness } from '../support/harness.js';
import { ensurePanelBuilt, firstLoadJsGzip } from './build-panel.js';

/** The built panel as the service serves it at /app/. */
let h: Harness;
beforeAll(async () => {
  await ensurePanelBuilt();
  h = await startHarness();
}, 120_000);
afterAll(() => h.close());

describe('the control panel at /app/', () => {
  it('serves index.html with no-cache and the strict CSP, for / and for every client-side route', async () => {
    for (const url of [
      '/app/',
      '/app/account',
      '/app/tasks/01900000-0000-7000-8000-000000000000',
      '/app/index.html',
      '/app/no/such/page',
    ]) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toContain('text/html');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toBe(PANEL_CSP);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.body).toContain('<div id="root">');
      expect(res.body).toMatch(/src="\/app\/assets\/index-[\w-]+\.js"/);
    }
    expect(PANEL_CSP).toBe(
      "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; " +
        "frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    const bare = await h.app.inject({ method: 'GET', url: '/app' });
    expect(bare.statusCode).toBe(301);
    expect(bare.headers.location).toBe('/app/');
  });

  it('serves hashed assets for a year, immutable; a missing asset is 404, not index.html', async () => {
    const index = (await h.app.inject({ method: 'GET', url: '/app/' })).body;
    const script = /src="(\/app\/assets\/[^"]+\.js)"/.exec(index)![1]!;
    const style = /href="(\/app\/assets\/[^"]+\.css)"/.exec(index)![1]!;
    for (const [url, type] of [
      [script, 'javascript'],
      [style, 'text/css'],
    ] as const) {
      const res = await h.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toContain(type);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const missing = await h.app.inject({ method: 'GET', url: '/app/assets/index-nope.js' });
    expect(missing.statusCode).toBe(404);
    const climbing = await h.app.inject({ method: 'GET', url: '/app/assets/..%2f..%2f..%2fpackage.json' });
    expect(climbing.statusCode).toBe(404);
    expect(climbing.body).not.toContain('"name"');
  });

  it('loads under 200 KB of JavaScript, gzip-compressed', () => {
    const { files, bytes } = firstLoadJsGzip();
    console.log(
      `control panel: first load ${(bytes / 1024).toFixed(1)} KB of JavaScript gzip-compressed (${files.join(', ')})`,
    );
    expect(files.length).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(200 * 1024);
  });

  it('refers to nothing on another origin', async () => {
    const index = (await h.app.inject({ method: 'GET', url: '/app/' })).body;
    expect(index).not.toMatch(/(?:src|href)="(?:https?:)?\/\//);
  });

  it('answers 503 with a clear text when the panel is not built', async () => {
    const app = Fastify();
    await app.register(panelRoutes, { deps: h.deps as Deps, dir: '/nonexistent/emend-panel' });
    const res = await app.inject({ method: 'GET', url: '/app/' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toBe('the control panel is not built: run npm run build\n');
    await app.close();
  });
});
