import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { EnvironmentCache } from '../../src/environments/env-cache.js';
import type { Sandbox } from '../../src/sandbox/types.js';
import { fixtureSandbox, removeFixtureRepos } from './fixture-repos.js';

/**
 * The real sandbox with network for the setup phase, for tests that install from the npm
 * registry or from a package index they serve on loopback (`loopback`: its host:port). The one
 * place that says how setup reaches the network in tests: through the egress proxy, as by
 * default, with those loopback addresses on its setup allowlist (EMEND_SETUP_ALLOW).
 */
export function setupNetworkSandbox(loopback: string[] = []): Promise<Sandbox> {
  return fixtureSandbox({
    EMEND_SANDBOX_SETUP_NETWORK: 'proxy',
    ...(loopback.length > 0 ? { EMEND_SETUP_ALLOW: loopback.join(',') } : {}),
  });
}

/**
 * For a test file whose fixture projects install from the npm registry: the sandbox above and an
 * environment cache of the file's own, so each install happens once however many validations
 * share it. Registers the file's hooks (made in beforeAll, removed in afterAll with the fixture
 * repositories); `environments()` is the scope a validation uses, under `repository`.
 */
export function onlineProjects(repository: string, maxBytes = 256 * 1024 * 1024) {
  let sandbox: Sandbox | undefined;
  let cacheDir: string | undefined;
  let cache: EnvironmentCache | undefined;
  beforeAll(async () => {
    sandbox = await setupNetworkSandbox();
    cacheDir = mkdtempSync(join(tmpdir(), 'emend-online-cache-'));
    cache = new EnvironmentCache({ dir: cacheDir, maxBytes });
  });
  afterAll(() => {
    removeFixtureRepos();
    if (cacheDir) rmSync(cacheDir, { recursive: true, force: true });
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('onlineProjects is used before its beforeAll ran');
    return value;
  };
  return {
    sandbox: () => ready(sandbox),
    environments: () => ({ cache: ready(cache), workspace: 'local', repository }),
  };
}
