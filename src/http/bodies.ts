import type { FastifyInstance, FastifyRequest, preValidationAsyncHookHandler } from 'fastify';
import { AppError } from '../errors.js';

/** The methods whose request body is read (Fastify reads none for GET and HEAD). */
export const BODY_METHODS: ReadonlySet<string> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** An empty body, or one of only whitespace: what clients send when they mean "nothing". */
const isBlank = (body: string | Buffer) =>
  body.length === 0 || (typeof body === 'string' ? body : body.toString('latin1')).trim() === '';

const isEmptyObject = (value: unknown) =>
  value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0;

/**
 * How request bodies are read. Most HTTP clients and generated SDKs send a Content-Type on
 * every request, body or not, so an empty body means "no body" whatever its Content-Type; the
 * route's schema then judges it as `{}` (src/http/validation.ts). A non-empty body must be
 * JSON (415 otherwise). A route that takes no body accepts none, `{}` or `null`, and refuses
 * anything else rather than silently ignoring what the caller thought it was sending.
 */
export function installBodyParsing(app: FastifyInstance) {
  // Fastify's own JSON parser (prototype-poisoning checks included) for non-empty bodies.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser(
    'application/json',
    { parseAs: 'string' },
    (request: FastifyRequest, body: string | Buffer, done) => {
      if (isBlank(body)) return done(null, undefined);
      parseJson(request, body as string, done);
    },
  );
  // Every other media type (text/plain, forms, multipart, none at all with a body).
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request: FastifyRequest, body: string | Buffer, done) => {
    if (isBlank(body)) return done(null, undefined);
    done(new AppError('unsupported_media_type', 'send the body as application/json (or no body at all)'), undefined);
  });

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (route.schema?.body !== undefined || !methods.some((m) => BODY_METHODS.has(m))) return;
    if (route.config?.rawBody) return;
    const refuseBody: preValidationAsyncHookHandler = async (request) => {
      const body = request.body;
      if (body === undefined || body === null || isEmptyObject(body)) return;
      throw new AppError('bad_request', `body: ${request.method} ${route.url} takes no request body; send none, or {}`);
    };
    const existing =
      route.preValidation === undefined
        ? []
        : Array.isArray(route.preValidation)
          ? route.preValidation
          : [route.preValidation];
    route.preValidation = [refuseBody, ...existing];
  });
}
