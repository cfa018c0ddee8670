import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { createLogger } from '../../src/logger.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { createSandbox } from '../../src/sandbox/sandbox.js';
import { startHarness } from '../support/harness.js';
import { openTestDatabase } from '../support/test-db.js';
import { newDir, removeDirs } from './helpers.js';

// /health carries the sandbox on either database, so these run in both projects.
describe('/health and the start-up log report the sandbox', () => {
  afterAll(removeDirs);

  it('says at start-up that EMEND_SANDBOX_SETUP_NETWORK=on is deprecated and means host', async () => {
    const h = await startHarness({ EMEND_SANDBOX_SETUP_NETWORK: 'on' });
    try {
      expect(h.deps.sandbox.report().setupNetwork).toBe('host');
      expect(h.logLines.some((l) => l.includes('EMEND_SANDBOX_SETUP_NETWORK=on is deprecated'))).toBe(true);
      const res = await h.app.inject({ method: 'GET', url: '/health' });
      expect(res.json().sandbox.setup_network).toBe('host');
    } finally {
      await h.close();
    }
  });

  it('shows the kind, cgroups and the limits in force', async () => {
    const h = await startHarness({ EMEND_SANDBOX_MEMORY_MB: '512', EMEND_SANDBOX_PROCESSES: '100' });
    try {
      const res = await h.app.inject({ method: 'GET', url: '/health' });
      expect(res.statusCode).toBe(200);
      const { sandbox } = res.json();
      const report = h.deps.sandbox.report();
      expect(sandbox).toMatchObject({
        kind: 'bubblewrap',
        version: report.version,
        cgroups: report.cgroups,
        memory_limit: report.memoryLimit,
        process_limit: report.processLimit,
        network_for_setup: true,
        setup_network: 'proxy',
        limits: {
          timeout_ms: 600_000,
          cpu_seconds: 600,
          memory_bytes: 512 * 1024 * 1024,
          max_processes: 100,
          file_size_bytes: 1024 * 1024 * 1024,
          open_files: 4096,
          output_bytes: 256 * 1024,
        },
      });
      expect(sandbox.problem).toBeUndefined();
      const line = h.logLines.map((l) => JSON.parse(l)).find((l) => l.sandbox);
      expect(line).toMatchObject({ sandbox: { kind: 'bubblewrap' } });
      expect(line.msg).toContain('sandbox: bubblewrap');
    } finally {
      await h.close();
    }
  });

  it('stays 200 with an unavailable sandbox, and says why', async () => {
    const config = loadConfig({ EMEND_DATA_DIR: newDir(), EMEND_SECRET_KEY: randomBytes(32).toString('hex') });
    const sandbox = await createSandbox(config.sandbox, { bwrapPath: '/nonexistent/bwrap' });
    const database = await openTestDatabase();
    const lines: string[] = [];
    const sink = { write: (s: string) => lines.push(s) } as unknown as NodeJS.WritableStream;
    const runtime = await createRuntime(config, database, { log: createLogger('info', sink), sandbox });
    const app = await buildApp(runtime.deps);
    try {
      const res = await app.inject({ method: 'GET', url: '/health' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({
        ok: true,
        sandbox: {
          kind: 'unavailable',
          cgroups: 'none',
          memory_limit: false,
          process_limit: false,
          problem: expect.stringContaining('bubblewrap is required'),
        },
      });
      const warned = lines.map((l) => JSON.parse(l)).find((l) => l.sandbox);
      expect(warned).toMatchObject({ level: 40, sandbox: { kind: 'unavailable' } });
      expect(warned.msg).toContain('repository commands will be refused');
    } finally {
      await app.close();
      await runtime.close();
      await database.close();
    }
  });

  it('logs unsafe-host loudly at warn', async () => {
    const h = await startHarness({ EMEND_SANDBOX: 'unsafe-host' });
    try {
      const warned = h.logLines.map((l) => JSON.parse(l)).find((l) => l.sandbox);
      expect(warned).toMatchObject({ level: 40, sandbox: { kind: 'unsafe-host' } });
      expect(warned.msg).toContain('ON THIS HOST');
      expect((await h.app.inject({ method: 'GET', url: '/health' })).json().sandbox.kind).toBe('unsafe-host');
    } finally {
      await h.close();
    }
  });
});
