import { defineConfig } from 'vitest/config';
import { findPostgresBin } from './test/support/postgres-cluster.js';

// Every test that touches the database runs twice: on PGlite and on a throwaway PostgreSQL
// cluster. Without PostgreSQL server binaries (CI installs them) the second leg is skipped, loudly.
const havePostgres = findPostgresBin() !== undefined;
if (!havePostgres) {
  console.warn('NOTICE: no PostgreSQL server binaries under /usr/lib/postgresql; the postgres test leg is skipped');
}

const shared = {
  include: ['test/**/*.test.ts'],
  globalSetup: ['test/support/global-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // test/llm/model-timeouts.test.ts forces garbage collection during model calls (global.gc).
  execArgv: ['--expose-gc'],
};

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    projects: [
      { test: { ...shared, name: 'pglite' } },
      ...(havePostgres ? [{ test: { ...shared, name: 'postgres', exclude: ['test/unit/**'] } }] : []),
    ],
  },
});
