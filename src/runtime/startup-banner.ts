import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { startupWarnings } from '../config/exposure.js';

export interface Serving {
  /** The address the server listens on, as Fastify reports it. */
  url: string;
  database: 'pglite' | 'postgres';
}

/** Where a person opens the panel and the API docs: the public address, or the real port when PORT was 0. */
function siteOf(config: Config, serving: Serving): string {
  return config.port === 0 ? serving.url : config.baseUrl;
}

/** The banner a person at a terminal reads: where the panel and the docs are, and what to fix. */
export function bannerText(config: Config, serving: Serving): string {
  const site = siteOf(config, serving);
  const where = serving.database === 'pglite' ? `embedded PGlite in ${config.dataDir}` : 'PostgreSQL (DATABASE_URL)';
  const lines = [
    '',
    `emend is serving on ${serving.url}`,
    `  Control panel  ${site}/app/`,
    `  API docs       ${site}/docs`,
    `  Database       ${where}`,
    ...startupWarnings(config).map((w) => `  Warning: ${w}`),
    '  Ctrl-C stops it; `npx emend serve` starts it again without rebuilding (`npm start` rebuilds first). Logs follow as JSON lines.',
    '',
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * Says the server is up. On a terminal (stdout a TTY), a short banner in words; otherwise the same
 * facts as JSON log lines for a log collector (pino's usual split: human on a terminal, JSON in a pipe).
 */
export function announceServing(
  config: Config,
  serving: Serving,
  log: Logger,
  terminal: Pick<NodeJS.WriteStream, 'isTTY' | 'write'> = process.stdout,
): void {
  if (terminal.isTTY) {
    terminal.write(bannerText(config, serving));
    return;
  }
  const site = siteOf(config, serving);
  for (const warning of startupWarnings(config)) log.warn({ warning }, warning);
  log.info(
    {
      url: serving.url,
      panel: `${site}/app/`,
      docs: `${site}/docs`,
      database: serving.database,
      dataDir: serving.database === 'pglite' ? config.dataDir : undefined,
    },
    'emend is serving',
  );
}
