import { createHash } from 'node:crypto';
import { type FastifyPluginAsyncTypebox, Type } from '@fastify/type-provider-typebox';
import { and, eq, isNotNull } from 'drizzle-orm';
import { tasks } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { readScreenshot } from '../../sites/publish.js';
import { AppError } from '../../errors.js';
import { readSiteFile } from '../../sites/store.js';
import { getOwnTask } from '../../tasks/service.js';
import { caller } from '../auth.js';
import { errorResponses } from '../errors.js';
import { IdParams, described, StringEnum } from '../schema-parts.js';

/**
 * What a published site may do: run its own scripts and load its own files, nothing else.
 * `sandbox` without allow-same-origin gives the page an opaque origin, so even on the API's
 * own host it cannot send the caller's cookies to the API or read its answers; connect-src
 * 'none' and form-action 'none' stop it sending anything anywhere.
 */
export const SITE_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "style-src 'self' 'unsafe-inline'",
  "script-src 'self' 'unsafe-inline'",
  "font-src 'self' data:",
  "connect-src 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  'sandbox allow-scripts allow-popups',
].join('; ');

const SLUG = /^[a-z0-9-]{3,80}$/;

/** The file a site path names: a directory means its index.html. */
const fileOf = (path: string) => (path === '' || path.endsWith('/') ? `${path}index.html` : path);

export const siteRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const hidden = { schema: { hide: true }, config: { access: 'public' as const } };

  // Relative links in index.html need the trailing slash.
  app.get<{ Params: { slug: string } }>('/s/:slug', hidden, async (request, reply) =>
    // Only a well-formed slug goes into the Location header (a NUL there cannot be sent at all).
    SLUG.test(request.params.slug)
      ? reply.redirect(`/s/${request.params.slug}/`, 301)
      : reply.status(404).type('text/plain; charset=utf-8').header('cache-control', 'no-store').send('Not found\n'),
  );

  app.get<{ Params: { slug: string; '*': string } }>('/s/:slug/*', hidden, async (request, reply) => {
    const { slug } = request.params;
    const notFound = () =>
      reply.status(404).type('text/plain; charset=utf-8').header('cache-control', 'no-store').send('Not found\n');
    if (!SLUG.test(slug)) return notFound();
    const [site] = await deps.db
      .select({ id: tasks.id })
      .from(tasks)
      .where(and(eq(tasks.siteSlug, slug), isNotNull(tasks.deployedUrl)));
    if (!site) return notFound();
    let path: string;
    try {
      path = fileOf(decodeURIComponent(request.params['*'] ?? ''));
    } catch {
      return notFound();
    }
    let file = await readSiteFile(deps, site.id, path).catch(() => null);
    if (!file && !/\.[a-z0-9]+$/i.test(path)) {
      // /about → about/index.html, as static hosts do
      file = await readSiteFile(deps, site.id, `${path}/index.html`).catch(() => null);
      if (file) return reply.redirect(`/s/${slug}/${path.split('/').map(encodeURIComponent).join('/')}/`, 301);
    }
    if (!file) return notFound();
    const etag = `"${createHash('sha256').update(file.content).digest('base64url').slice(0, 27)}"`;
    reply
      .header('content-type', file.contentType)
      .header('cache-control', 'public, max-age=300')
      .header('etag', etag)
      .header('content-security-policy', SITE_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cross-origin-opener-policy', 'same-origin');
    if (request.headers['if-none-match'] === etag) return reply.status(304).send();
    return reply.send(file.content);
  });
};

/** Screenshots of a scaffold task's site, for its owner (the task's other data is private too). */
export const screenshotRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/tasks/:id/screenshots/:name',
    {
      schema: {
        tags: ['tasks'],
        operationId: 'getScreenshot',
        summary: 'A screenshot of a scaffold task’s site taken by the validator (desktop.png or mobile.png)',
        params: Type.Object({
          id: IdParams.properties.id,
          name: StringEnum(['desktop.png', 'mobile.png'] as const),
        }),
        response: {
          200: described(
            'the PNG image',
            Type.Unsafe<Buffer>({
              description: 'image/png',
              content: { 'image/png': { schema: { type: 'string', format: 'binary' } } },
            }),
          ),
          ...errorResponses(400, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const task = await getOwnTask(deps, caller(request).workspace.id, request.params.id);
      const png = await readScreenshot(deps, task.id, request.params.name.replace(/\.png$/, ''));
      if (!png) throw new AppError('not_found', `no ${request.params.name} for task ${task.id} yet`);
      return reply.header('content-type', 'image/png').header('cache-control', 'private, no-cache').send(png);
    },
  );
};
