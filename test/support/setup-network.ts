import type { Sandbox } from '../../src/sandbox/types.js';
import { fixtureSandbox } from './fixture-repos.js';

/**
 * The real sandbox with network for the setup phase, for tests that install from the npm
 * registry or from a package index they serve on loopback (`loopback`: its host:port).
 * The one place that says how setup reaches the network in tests: today the host's network
 * (EMEND_SANDBOX_SETUP_NETWORK=on); with the egress proxy, the proxy with those loopback
 * addresses on its setup allowlist.
 */
export function setupNetworkSandbox(loopback: string[] = []): Promise<Sandbox> {
  void loopback;
  return fixtureSandbox({ EMEND_SANDBOX_SETUP_NETWORK: 'on' });
}
