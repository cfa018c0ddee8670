// The real service on a loopback port with its own data dir, its code host and model provider
// the test doubles given: what `npm run demo` and `npm run bench:express-task` run against.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config/config.js';
import { startServer } from '../src/server.js';

export interface LocalService {
  server: Awaited<ReturnType<typeof startServer>>;
  /** Closes the server and removes its data dir. */
  close(): Promise<void>;
}

export async function startLocalService(opts: {
  /** The data dir's name prefix in the temporary directory. */
  prefix: string;
  github: { webUrl: string; apiUrl: string };
  openai: { key: string; baseUrl: string };
}): Promise<LocalService> {
  const dataDir = mkdtempSync(join(tmpdir(), opts.prefix));
  const config = loadConfig({
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    EMEND_DATA_DIR: dataDir,
    EMEND_SECRET_KEY: randomBytes(32).toString('hex'),
    EMEND_SCM_WEB_URL: opts.github.webUrl,
    EMEND_SCM_API_URL: opts.github.apiUrl,
    OPENAI_API_KEY: opts.openai.key,
    OPENAI_BASE_URL: opts.openai.baseUrl,
    DATABASE_URL: '',
  });
  const server = await startServer(config);
  return {
    server,
    close: async () => {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
