import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { OutboundAllowRule } from '../config/outbound.js';
import { judge, normalise } from '../outbound/address-policy.js';

/**
 * Where the setup phase may go (docs/environments.md): the public registries of each ecosystem
 * emend detects, and what the operator adds in EMEND_SETUP_ALLOW. Decided on the name first
 * (a host not on the list is refused before anything is resolved), then on every address the
 * name resolves to, by the outbound address policy (src/outbound/address-policy.ts).
 */

/** The public registries and their file hosts, on the standard ports. */
export const DEFAULT_SETUP_HOSTS: readonly string[] = [
  // npm, and yarn's mirror of it; yarn berry's own releases
  'registry.npmjs.org',
  'registry.yarnpkg.com',
  'repo.yarnpkg.com',
  // PyPI: the index and its files
  'pypi.org',
  'files.pythonhosted.org',
  // crates.io: the sparse index and the crate files
  'crates.io',
  'index.crates.io',
  'static.crates.io',
  // the Go module proxy and checksum database
  'proxy.golang.org',
  'sum.golang.org',
  // Maven Central, and Gradle's plugin portal and distributions
  'repo.maven.apache.org',
  'repo1.maven.org',
  'plugins.gradle.org',
  'plugins-artifacts.gradle.org',
  'services.gradle.org',
  'downloads.gradle.org',
  // RubyGems
  'rubygems.org',
  'index.rubygems.org',
  // GitHub's archive hosts, for dependencies named by a git URL or a tarball
  'github.com',
  'codeload.github.com',
  'objects.githubusercontent.com',
];

const STANDARD_PORTS = new Set([80, 443]);

/** What the policy says of a destination before any address is known. */
export type HostDecision =
  | {
      ok: true /** private and loopback addresses may be reached (an explicit host:port of EMEND_SETUP_ALLOW) */;
      privateOk: boolean;
    }
  | { ok: false; reason: string };

/** A host as the proxy request writes it: lower case, no brackets around IPv6, no trailing dot. */
export const plainHost = (host: string) =>
  host
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');

/** The operator's rule naming this host (or address) and port, if any. */
function operatorRule(rules: readonly OutboundAllowRule[], host: string, port: number): OutboundAllowRule | undefined {
  return rules.find((rule) => {
    if (rule.port !== undefined && rule.port !== port) return false;
    if (rule.kind === 'host') return rule.host === host && (rule.port !== undefined || STANDARD_PORTS.has(port));
    return isIP(host) !== 0 && sameAddress(rule, host);
  });
}

/** Whether a single-address rule (config takes no wider ranges for setup) is this address. */
function sameAddress(rule: Extract<OutboundAllowRule, { kind: 'range' }>, host: string): boolean {
  try {
    return normalise(host).toString() === normalise(rule.range[0].toString()).toString();
  } catch {
    return false;
  }
}

/**
 * Whether the setup phase may connect to `host`:`port` at all. A host of the default list on
 * 80 or 443, or one the operator named; an address literal only when the operator named it with
 * its port. Only an operator's explicit host:port may lead to a private or loopback address.
 */
export function decideHost(rules: readonly OutboundAllowRule[], rawHost: string, port: number): HostDecision {
  const host = plainHost(rawHost);
  const rule = operatorRule(rules, host, port);
  if (rule) return { ok: true, privateOk: rule.port !== undefined };
  if (isIP(host)) return { ok: false, reason: `an address (${host}) not named with its port in EMEND_SETUP_ALLOW` };
  if (DEFAULT_SETUP_HOSTS.includes(host)) {
    return STANDARD_PORTS.has(port)
      ? { ok: true, privateOk: false }
      : { ok: false, reason: `port ${port}: the registries are reached on 80 and 443 only` };
  }
  return { ok: false, reason: `${host} is not on the setup allowlist (the public registries and EMEND_SETUP_ALLOW)` };
}

/**
 * The IPv4 documentation ranges (RFC 5737). Nothing on the internet or in an operator's network is
 * numbered there, so they hold no private service and no metadata endpoint; a sandboxed build
 * machine's egress gateway can be (this workplace's registries resolve to 203.0.113.80). A name
 * of the list may lead there; an address literal may not, as ever.
 */
const DOCUMENTATION = ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.0/24'].map((r) => ipaddr.parseCIDR(r));

const inDocumentationRange = (address: string) => {
  const parsed = normalise(address);
  return parsed.kind() === 'ipv4' && DOCUMENTATION.some((range) => (parsed as ipaddr.IPv4).match(range));
};

/**
 * Why an address a permitted host resolved to may not be connected to, or undefined when it
 * may: public addresses always; loopback, private, link-local (the metadata address among
 * them), carrier-grade NAT, multicast and the other special ranges only for an operator's
 * explicit host:port.
 */
export function refusedAddress(
  address: string,
  decision: HostDecision,
  host: string,
  port: number,
): string | undefined {
  if (!decision.ok) return decision.reason;
  if (decision.privateOk) return undefined;
  const verdict = judge([], address, port, host);
  if (verdict.ok || (!isIP(host) && inDocumentationRange(address))) return undefined;
  return `${host} resolves to ${verdict.address}, ${verdict.range}`;
}
