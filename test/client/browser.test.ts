import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALC_PROMPT, CALC_REPO, scriptCalcRun } from '../support/fix-script.js';
import { newAccount } from '../support/harness.js';
import { type ModelService, startModelService } from '../support/model-service.js';
import { haveChromium, launch, newPage } from '../web/browser.js';

// @emend/client in a real browser (headless Chromium): its source bundled for the browser as a
// bundler would, served from the service's origin, creating a task and following it to the end
// over the same real server, the scripted model and the fake GitHub as on Node.
let svc: ModelService;
let baseUrl: string;
let browser: Browser;
let bundle: string;

/** The package's source as one ES module for browsers (vite's library build, nothing written). */
async function bundleClient(): Promise<string> {
  const root = fileURLToPath(new URL('../../packages/client/', import.meta.url));
  const result = await build({
    configFile: false,
    root,
    publicDir: false,
    logLevel: 'silent',
    build: { write: false, minify: false, lib: { entry: 'src/index.ts', formats: ['es'], fileName: 'client' } },
  });
  const outputs = Array.isArray(result) ? result : [result];
  for (const out of outputs)
    if ('output' in out) for (const chunk of out.output) if (chunk.type === 'chunk' && chunk.isEntry) return chunk.code;
  throw new Error('the library build produced no entry chunk');
}

beforeAll(async () => {
  if (!haveChromium) return;
  bundle = await bundleClient();
  svc = await startModelService();
  baseUrl = await svc.h.app.listen({ host: '127.0.0.1', port: 0 });
  browser = await launch();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await svc?.close();
});

/** A page that loads the bundle as a module and hands it to the test (an import() in evaluate would be vitest's). */
const PAGE =
  '<!doctype html><title>client</title>' +
  '<script type="module">import * as client from "./client.js"; window.emendClient = client;</script>';

interface PageResult {
  id: string;
  types: string[];
  logIds: number[];
  end: unknown;
  notFound: string | false;
}

describe.skipIf(!haveChromium)('@emend/client in a browser', { timeout: 150_000 }, () => {
  it('creates a task and follows it to done with fetch and ReadableStream; typed errors', async () => {
    expect(bundle).not.toMatch(/from\s*["']node:/);
    scriptCalcRun(svc.model);
    const owner = await newAccount(svc.h, { plan: 'pro', credits: 5 });
    svc.h.github.createRepo('acme', 'calc-browser', { files: CALC_REPO, collaborators: [owner.scm!.login] });
    const { context, page, pageErrors } = await newPage(browser, baseUrl);
    // The bundle is served from the service's own origin, as an application embedding it would be.
    await page.route(`${baseUrl}/client-test/**`, (route) =>
      route.fulfill(
        route.request().url().endsWith('.js')
          ? { contentType: 'text/javascript', body: bundle }
          : { contentType: 'text/html', body: PAGE },
      ),
    );
    await page.goto('/client-test/');
    await page.waitForFunction(() => 'emendClient' in window);
    const got = await page.evaluate(
      async ({ token, prompt, repoUrl }): Promise<PageResult> => {
        const { createClient, NotFoundError } = Reflect.get(window, 'emendClient');
        const emend = createClient({ baseUrl: location.origin, token });
        const task = await emend.createTask({ prompt, repo_url: repoUrl });
        const events: { type: string; id?: number }[] = [];
        for await (const event of emend.followTask(task.id)) events.push(event);
        let notFound: string | false = false;
        try {
          await emend.getTask(crypto.randomUUID());
        } catch (err) {
          notFound = err instanceof NotFoundError && (err as { code: string }).code;
        }
        return {
          id: task.id,
          types: events.map((e) => e.type),
          logIds: events.flatMap((e) => (e.type === 'log' ? [e.id!] : [])),
          end: events.at(-1),
          notFound,
        };
      },
      { token: owner.token, prompt: CALC_PROMPT, repoUrl: `${svc.h.github.webUrl}/acme/calc-browser` },
    );
    expect(got.types[0]).toBe('connected');
    expect(got.end).toEqual({ type: 'end', data: { status: 'done' } });
    const logs = await svc.h.app.inject({ method: 'GET', url: `/v1/tasks/${got.id}`, headers: owner.auth });
    expect(got.logIds).toEqual((logs.json().logs as { id: number }[]).map((l) => l.id));
    expect(got.notFound).toBe('not_found');
    expect(pageErrors.filter((e) => !/status of 404/.test(e))).toEqual([]);
    await context.close();
  });
});
