import { existsSync, statSync } from 'node:fs';
import { dirname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Deps } from '../../deps.js';
import { AppError } from '../../errors.js';

/**
 * The panel's own policy: its scripts and styles come from its own files only (no inline code,
 * no CDN), it talks to this origin only, and no other site may frame it.
 */
export const PANEL_CSP = [
  "default-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "style-src 'self'",
  "script-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Where `npm run build:web` puts the panel (dist/web), seen from this module: from
 * dist/http/routes (the built server) or src/http/routes (under tsx).
 */
export const PANEL_DIR_CANDIDATES = [resolve(here, '../../web'), resolve(here, '../../../dist/web')];

export function panelDir(): string | undefined {
  return PANEL_DIR_CANDIDATES.find((dir) => existsSync(join(dir, 'index.html')));
}

/** A browser's navigation asks for text/html first; curl and API clients ask for any type or for JSON. */
const wantsHtml = (accept: string | undefined) => !!accept && /(^|,)\s*text\/html\b/i.test(accept);

const NOT_BUILT = 'the control panel is not built: run npm run build\n';

/**
 * The control panel at /app/: hashed assets cached for a year, index.html for every other path
 * (client-side routes).
 */
export const panelRoutes: FastifyPluginAsync<{
  deps: Deps /** tests: another place to look for the built panel */;
  dir?: string;
}> = async (app, options) => {
  const findDir = () =>
    options.dir !== undefined ? (existsSync(join(options.dir, 'index.html')) ? options.dir : undefined) : panelDir();
  // serve:false: the routes below decide what each path answers; sendFile streams the file.
  await app.register(fastifyStatic, { serve: false });
  const config = { access: 'public' as const };
  const schema = { hide: true };

  const secure = (reply: FastifyReply) =>
    reply
      .header('content-security-policy', PANEL_CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('x-frame-options', 'DENY');

  const sendIndex = (reply: FastifyReply, dir: string) =>
    secure(reply)
      .header('cache-control', 'no-cache')
      .type('text/html; charset=utf-8')
      .sendFile('index.html', dir, { cacheControl: false });

  app.get('/app', { config, schema }, async (_request, reply) => reply.redirect('/app/', 301));

  // The site's root: a browser (it asks for HTML) is sent to the panel; an API client gets the
  // API's 404, whose message says where the API, its docs and the panel are (issue 45).
  app.get('/', { config, schema }, async (request, reply) => {
    if (wantsHtml(request.headers.accept)) return reply.header('cache-control', 'no-cache').redirect('/app/', 303);
    throw new AppError(
      'not_found',
      'no route GET /: the API is under /v1 (described at /docs and /openapi-public.yaml); the control panel is at /app/',
    );
  });

  app.get<{ Params: { '*': string } }>('/app/*', { config, schema }, async (request, reply) => {
    const dir = findDir();
    if (!dir)
      return secure(reply)
        .status(503)
        .header('cache-control', 'no-store')
        .type('text/plain; charset=utf-8')
        .send(NOT_BUILT);
    const rest = request.params['*'] ?? '';
    // Only files the build wrote, never a path that climbs out of the panel's directory.
    const file = normalize(join(dir, rest));
    const inside = file.startsWith(dir + sep);
    const isFile = inside && rest !== '' && !rest.endsWith('/') && existsSync(file) && statSync(file).isFile();
    if (rest.startsWith('assets/')) {
      if (!isFile)
        return secure(reply)
          .status(404)
          .header('cache-control', 'no-store')
          .type('text/plain; charset=utf-8')
          .send('Not found\n');
      // File names carry a content hash: a changed file is a new URL.
      return secure(reply)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .sendFile(rest, dir, { cacheControl: false });
    }
    if (isFile && rest !== 'index.html')
      return secure(reply).header('cache-control', 'no-cache').sendFile(rest, dir, { cacheControl: false });
    return sendIndex(reply, dir);
  });
};
