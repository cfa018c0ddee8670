/**
 * V8 flags for the Node processes a test run starts (vitest's workers and the service's programs
 * tests run as processes): PGlite's WebAssembly compiled by the baseline compiler only. Tests
 * change how fast PGlite's code runs, never what it does; production keeps V8's defaults.
 */
export const TEST_NODE_FLAGS = ['--liftoff-only'];
