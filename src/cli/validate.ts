import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { localEnvironmentCache, localSandbox, localToolchainCache } from './local-sandbox.js';
import { NotACheckoutError } from '../environments/copies.js';
import { ValidationAborted } from '../environments/sandboxed.js';
import type { ValidatorOutput } from '../step-contract/fix.js';
import { TestRunSlots } from '../validator/run-slots.js';
import { validate } from '../validator/validate.js';
import { abortOnSignals } from './interrupt.js';

const USAGE = 'usage: emend validate --repo DIR [--base REV] [--json] [--setup-env NAME=VALUE]...';

/** A variable name as the shell writes one. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const EXIT_PASSED = 0;
const EXIT_NEW_FAILURES = 1;
const EXIT_USAGE = 2;
const EXIT_INTERRUPTED = 130;

const list = (title: string, ids: string[]) => (ids.length ? [`${title}:`, ...ids.map((id) => `  - ${id}`)] : []);
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The result for a person: the verdict first, then what failed, then the end of the output. */
export function formatResult(out: ValidatorOutput, base: string): string {
  if (out.command === null) return `${out.message ?? 'no test command found'}: nothing to validate`;
  const verdict =
    out.passed === null
      ? `NOT VALIDATED: ${out.message}`
      : out.passed
        ? `PASSED: no new failures${out.fixed.length ? `, ${out.fixed.length} fixed` : ''}`
        : out.new_failures.length === 0 && out.reproduction
          ? `FAILED: ${out.reproduction.note}`
          : `FAILED: ${out.new_failures.length} new failure${out.new_failures.length === 1 ? '' : 's'}`;
  const setup = out.setup
    ? out.setup.skipped
      ? `${out.setup.command} (skipped: ${out.setup.skipped})`
      : out.setup.environment?.cache === 'hit'
        ? `${out.setup.command} (from the cache, ${out.setup.environment.key.slice(0, 12)}, ${seconds(out.setup.duration_ms)})`
        : `${out.setup.command} (exit ${out.setup.exit_code}, ${seconds(out.setup.duration_ms)})`
    : 'none needed';
  const lines = [
    `command:  ${out.command}  [${out.source}${out.runner ? `, ${out.runner}` : ''}]`,
    `setup:    ${setup}`,
    `baseline: ${base} (${out.baseline?.commit.slice(0, 12)}), ${out.baseline?.failures.length ?? 0} failing`,
    `tests:    ${
      out.tests
        ? `${out.tests.passed} passed, ${out.tests.failed} failed, ${out.tests.skipped} skipped`
        : 'not counted (the output names no test and has no total a runner prints)'
    }`,
    `time:     ${seconds(out.duration_ms)}`,
    `result:   ${verdict}`,
    ...list('new failures', out.new_failures),
    ...list('pre-existing failures (failing before the change too)', out.preexisting_failures),
    ...list('fixed (failing before, passing now)', out.fixed),
  ];
  if (out.reproduction) lines.push(`repro:    ${out.reproduction.note}`);
  if (out.message && out.passed !== null) lines.push(`note:     ${out.message}`);
  if (out.passed !== true) lines.push('--- end of the test output ---', out.log_tail);
  return lines.join('\n');
}

/**
 * `emend validate`: the validator step on a local checkout. The change is the checkout as it
 * stands (working-tree changes included), the baseline is REV (default HEAD); both run in
 * the configured sandbox, in temporary copies. Exit 0 when there are no new failures (or
 * nothing to test), 1 when there are.
 */
export async function validateCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: { repo?: string; base?: string; json?: boolean; 'setup-env'?: string[] };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        repo: { type: 'string' },
        base: { type: 'string' },
        json: { type: 'boolean' },
        'setup-env': { type: 'string', multiple: true },
      },
    }));
  } catch (err) {
    console.error(`emend: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (!values.repo) {
    console.error(`emend: validate needs --repo\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  // Variables for the setup phase only, as an operator's package index reaches a task's setup
  // (PIP_INDEX_URL, npm_config_registry); never the test phase's.
  const setupEnv: Record<string, string> = {};
  for (const pair of values['setup-env'] ?? []) {
    const at = pair.indexOf('=');
    const name = at > 0 ? pair.slice(0, at) : '';
    if (!ENV_NAME.test(name)) {
      console.error(`emend: --setup-env wants NAME=VALUE, got "${pair.slice(0, 40)}"\n\n${USAGE}`);
      return EXIT_USAGE;
    }
    setupEnv[name] = pair.slice(at + 1);
  }
  const config = loadConfig(env);
  const sandbox = await localSandbox(config);
  if (!sandbox) return 1;
  if (sandbox.report().kind === 'unsafe-host')
    console.error('emend: WARNING: EMEND_SANDBOX=unsafe-host: the tests run on this host, unisolated');
  const interrupt = abortOnSignals();
  const base = values.base ?? 'HEAD';
  const toolchainCache = localToolchainCache(config);
  // The data dir's environment cache, as tasks use it; the checkout's path stands for the repository.
  const cache = localEnvironmentCache(config);
  const environments = cache ? { cache, workspace: 'local', repository: resolve(values.repo) } : undefined;
  try {
    const out = await validate(
      sandbox,
      { dir: resolve(values.repo), base },
      {
        signal: interrupt.signal,
        limits: { testTimeoutMs: config.validator.testTimeoutMs },
        toolchainCache,
        ...(environments ? { environments } : {}),
        // One validation in this process: its two trees run at once where the machine has room for both.
        runSlots: TestRunSlots.forSandbox(sandbox.report(), config.validator.parallel),
        ...(Object.keys(setupEnv).length > 0 ? { setupEnv } : {}),
      },
    );
    console.log(values.json ? JSON.stringify(out, null, 2) : formatResult(out, base));
    return out.passed === false ? EXIT_NEW_FAILURES : EXIT_PASSED;
  } catch (err) {
    if (err instanceof NotACheckoutError) {
      console.error(`emend: ${err.message}`);
      return 1;
    }
    if (err instanceof ValidationAborted) {
      console.error('emend: validation interrupted');
      return EXIT_INTERRUPTED;
    }
    throw err;
  } finally {
    interrupt.release();
  }
}
