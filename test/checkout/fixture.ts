import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckoutDeps } from '../../src/checkout/checkout-deps.js';
import { createLogger } from '../../src/logger.js';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { type GitHttpServer, startGitHttp } from '../support/git-http.js';
import { logSink } from '../support/log-sink.js';

/** A data dir and a logger whose lines the test can read (debug level, so nothing is hidden). */
export function checkoutFixture() {
  const dataDir = mkdtempSync(join(tmpdir(), 'emend-ws-'));
  const { lines: logLines, stream: sink } = logSink();
  const deps: CheckoutDeps = { dataDir, log: createLogger('debug', sink) };
  return { dataDir, deps, logLines, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** Every regular file under `dir` (symlinks not followed), dot-directories such as .git included. */
export function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...allFiles(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Files under `dir` whose bytes contain any of `needles`. */
export function filesContaining(dir: string, needles: string[]): string[] {
  return allFiles(dir).filter((file) => {
    const bytes = readFileSync(file);
    return needles.some((n) => bytes.includes(n));
  });
}

/**
 * The common set-up of the checkout tests: one git HTTP server for the file, a fresh data
 * dir and logger for each test. Read `server` and `fx` inside tests (they change per test).
 */
export function useCheckoutTestbed() {
  const bed = {} as { server: GitHttpServer; fx: ReturnType<typeof checkoutFixture> };
  beforeAll(async () => {
    bed.server = await startGitHttp();
  });
  afterAll(() => bed.server.close());
  beforeEach(() => {
    bed.fx = checkoutFixture();
  });
  afterEach(() => bed.fx.cleanup());
  return bed;
}
