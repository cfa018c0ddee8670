import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { startHarness } from '../support/harness.js';
import { openTestDatabase } from '../support/test-db.js';

// GET /ready is readiness (GET /health stays liveness): 200 while the node takes traffic, 503
// `database_unreachable` while its database does not answer; 503 `draining` once it stops is
// tested on a real process sent SIGTERM (test/cli/graceful-stop.postgres.test.ts).
describe('GET /ready', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('answers 200 ready on both paths while the database answers', async () => {
    const h = await startHarness();
    try {
      for (const url of ['/ready', '/v1/ready']) {
        const res = await h.app.inject({ method: 'GET', url });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ ready: true });
      }
    } finally {
      await h.close();
    }
  });

  async function app() {
    const dataDir = mkdtempSync(join(tmpdir(), 'emend-ready-'));
    dirs.push(dataDir);
    const config = loadConfig({ EMEND_DATA_DIR: dataDir, EMEND_SECRET_KEY: randomBytes(32).toString('hex') });
    const database = await openTestDatabase();
    const runtime = await createRuntime(config, database, { log: createLogger('silent') });
    return { database, runtime, app: await buildApp(runtime.deps) };
  }

  it('answers 503 database_unreachable while the database does not answer, and /health stays its own', async () => {
    const { database, runtime, app: served } = await app();
    try {
      await database.close();
      const res = await served.inject({ method: 'GET', url: '/v1/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ ready: false, reason: 'database_unreachable' });
    } finally {
      await served.close();
      await runtime.close().catch(() => {});
    }
  });
});
