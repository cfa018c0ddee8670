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

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  const options = { level, redact: { paths: REDACT_PATHS, censor: '[redacted]' } };
  return destination ? pino(options, destination as pino.DestinationStream) : pino(options);
}
