import { pino, type Logger } from 'pino';

/** Secrets must never reach a log line: the paths where one could appear are censored. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  '*.api_key',
  '*.token',
  '*.secret',
  'api_key',
  'token',
];

/** Query parameters that carry a credential (the OAuth callback's one-time code among them). */
const SECRET_QUERY = /([?&](?:code|state|token|access_token|api_key|key)=)[^&#]*/gi;

export const redactUrl = (url: string) => url.replace(SECRET_QUERY, '$1[redacted]');

/** Requests as Fastify logs them, with credentials in the query string blanked. */
const serializers = {
  req: (req: { method?: string; url?: string; hostname?: string; ip?: string; socket?: { remotePort?: number } }) => ({
    method: req.method,
    url: req.url ? redactUrl(req.url) : req.url,
    host: req.hostname,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  }),
};

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, serializers, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
