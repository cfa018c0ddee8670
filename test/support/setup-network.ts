import type { Sandbox } from '../../src/sandbox/types.js';
import { fixtureSandbox } from './fixture-repos.js';

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
