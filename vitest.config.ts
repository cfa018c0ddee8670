import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';
import { available, requirements } from './test/support/requirements.js';
import { TEST_NODE_FLAGS } from './test/support/node-flags.js';

// A file's name says where it runs. *.db.test.ts runs twice, on PGlite and on a throwaway
// PostgreSQL cluster: the tests of SQL and of what sits on it. A plain *.test.ts runs once, on
// the pglite leg (it needs no database, or only the embedded one). *.postgres.test.ts runs on the
// postgres leg only. So neither leg skips whole files.
//
// Without PostgreSQL server binaries the second leg fails the run under CI (CI installs
// them); elsewhere it is left out with a notice, and the closing summary says "not run".
const havePostgres = available(requirements.postgres());

// Tests import @emend/client from its source (the package's exports point at dist, built by `npm run build`).
const resolve = {
  alias: { '@emend/client': fileURLToPath(new URL('./packages/client/src/index.ts', import.meta.url)) },
};

const shared = {
  include: ['test/**/*.test.ts'],
  globalSetup: ['test/support/global-setup.ts'],
  testTimeout: 30_000,
  hookTimeout: 60_000,
  // test/llm/model-timeouts.test.ts forces garbage collection during model calls (global.gc).
  // --liftoff-only: V8 compiles PGlite's WebAssembly with its baseline compiler and never
  // re-compiles it optimised in the background. A test process lives for one file and opens a few
  // small databases, so the optimising compile (every test process pays it once) costs more than
  // it gives: 25 % less CPU on DB-heavy files (bench/RESULTS.md "Test suite wall time").
  execArgv: ['--expose-gc', ...TEST_NODE_FLAGS],
};

export default defineConfig({
  test: {
    // One worker more than the cores (three on the 2-core machines CI runs on). Vitest's default, one
    // fewer than the cores, left half the CPU idle while tests waited on git, bubblewrap and HTTP; four
    // workers once kept the CPU 100 % busy and pushed tests with real worker processes past their
    // timeouts. Since the test processes compile PGlite's WebAssembly with the baseline compiler and the
    // postgres leg reuses its workers, the suite needs 44 % less CPU and waits more than it computes
    // (115 % of a core with two workers): three took it from 24 m 58 s to 18 m 36 s, every test passing
    // but one defect (bench/RESULTS.md "Test suite wall time"). EMEND_TEST_WORKERS overrides it.
    maxWorkers: Number(process.env.EMEND_TEST_WORKERS) || availableParallelism() + 1,
    reporters: ['default', ['./test/support/summary-reporter.ts', { legs: ['pglite', 'postgres'] }]],
    projects: [
      {
        resolve,
        test: { ...shared, name: 'pglite', exclude: [...configDefaults.exclude, 'test/**/*.postgres.test.ts'] },
      },
      ...(havePostgres
        ? [
            {
              resolve,
              test: {
                ...shared,
                name: 'postgres',
                include: ['test/**/*.db.test.ts', 'test/**/*.postgres.test.ts'],
                // One worker process runs file after file, its imports kept: 38 % less CPU on this leg,
                // whose processes hold no PGlite (a forked child copies little). The pglite leg keeps a
                // process per file: test/llm/model-timeouts.test.ts's forced collections fail in a
                // worker grown large (bench/RESULTS.md "Test suite wall time").
                isolate: false,
              },
            },
          ]
        : []),
    ],
  },
});
