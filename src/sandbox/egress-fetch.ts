import { lookup as systemLookup } from 'node:dns';
import { type LookupFunction, isIP } from 'node:net';
import { Agent, type RequestInfo, type RequestInit, buildConnector, fetch as undiciFetch } from 'undici';
import type { OutboundAllowRule } from '../config/outbound.js';
import { decideHost, plainHost, refusedAddress } from './egress-policy.js';
import { pinned, resolveAll } from './egress-resolve.js';

/**
 * A fetch for what the service itself downloads on a setup's behalf (the node, pnpm or yarn a
 * repository asks for, from the npm registry): judged by the setup phase's policy, the same as
 * the setup's own requests through the egress proxy (src/sandbox/egress-proxy.ts), so the two
 * cannot disagree about where the registries are. The name first, then every address it
 * resolves to; the connection goes to those judged addresses only.
 */

const CONNECT_TIMEOUT_MS = 10_000;

/** A refusal of the setup policy, with its reason. */
export class SetupRefused extends Error {
  constructor(host: string, port: number, reason: string) {
    super(`the setup policy refused ${host}:${port}: ${reason}`);
    this.name = 'SetupRefused';
  }
}

async function judged(rules: readonly OutboundAllowRule[], resolve: LookupFunction, rawHost: string, port: number) {
  const host = plainHost(rawHost);
  const decision = decideHost(rules, host, port);
  if (!decision.ok) throw new SetupRefused(host, port, decision.reason);
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await resolveAll(resolve, host);
  if (addresses.length === 0) throw new SetupRefused(host, port, 'it resolves to no address');
  for (const { address } of addresses) {
    const reason = refusedAddress(address, decision, host, port);
    if (reason !== undefined) throw new SetupRefused(host, port, reason);
  }
  return addresses;
}

/** A fetch under the setup policy (EMEND_SETUP_ALLOW and the registries' list). */
export function setupFetch(
  rules: readonly OutboundAllowRule[],
  resolve: LookupFunction = systemLookup as LookupFunction,
): typeof fetch {
  const agent = new Agent({
    connect(opts, callback) {
      const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
      judged(rules, resolve, opts.hostname, port).then(
        (addresses) =>
          buildConnector({ lookup: pinned(addresses), timeout: CONNECT_TIMEOUT_MS })(opts, (err, socket) =>
            err || !socket ? callback(err ?? new Error('no connection'), null) : callback(null, socket),
          ),
        (err: Error) => callback(err, null),
      );
    },
  });
  return async (input, init) => {
    // undici's own fetch with its own Agent (one package, one version), as src/outbound does.
    const response = await undiciFetch(input as RequestInfo, { ...(init as RequestInit), dispatcher: agent });
    return response as unknown as Response;
  };
}
