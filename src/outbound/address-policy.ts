import ipaddr from 'ipaddr.js';
import type { OutboundAllowRule } from '../config/outbound.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Why an address is not reached for a user, in the words the refusal uses. */
const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  linkLocal: 'a link-local address',
  private: 'a private (RFC 1918) address',
  uniqueLocal: 'a private (unique local, fc00::/7) address',
  carrierGradeNat: 'a carrier-grade NAT (100.64.0.0/10) address',
  multicast: 'a multicast address',
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
};

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const words = (range: string) => RANGE_WORDS[range] ?? `a reserved address (${range})`;
const withPrefix = (phrase: string, prefix: string) =>
  phrase.replace(/^an? /, `${/^[aeiou]/i.test(prefix) ? 'an' : 'a'} ${prefix} `);

/**
 * Why a user-given URL may not reach this address, or undefined when it may: only globally
 * routed unicast addresses are reached. IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible and
 * NAT64 (64:ff9b::/96) forms are judged by the IPv4 address inside them.
 */
export function refusedRange(address: Address): string | undefined {
  if (address.kind() === 'ipv4') {
    const range = address.range();
    return range === 'unicast' ? undefined : words(range);
  }
  const v6 = address as ipaddr.IPv6;
  if (v6.isIPv4MappedAddress()) {
    const inner = refusedRange(v6.toIPv4Address());
    return inner && withPrefix(inner, 'IPv4-mapped');
  }
  const range = v6.range();
  if (range === 'rfc6052') {
    const inner = refusedRange(new ipaddr.IPv4(v6.toByteArray().slice(12)));
    return inner && withPrefix(inner, 'NAT64');
  }
  // ::a.b.c.d (deprecated IPv4-compatible): ipaddr.js calls it unicast; nothing public lives there.
  if (range === 'unicast' && v6.match(IPV4_COMPATIBLE)) return 'a deprecated IPv4-compatible address';
  return range === 'unicast' ? undefined : words(range);
}

/** The address as policy sees it: IPv4-mapped IPv6 as the IPv4 address it carries. */
export function normalise(text: string): Address {
  const parsed = ipaddr.parse(text);
  return parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()
    ? (parsed as ipaddr.IPv6).toIPv4Address()
    : parsed;
}

function inRange(address: Address, rangeBase: Address, rangeBits: number): boolean {
  let base = rangeBase;
  let bits = rangeBits;
  // A range written as IPv4-mapped IPv6 (::ffff:10.0.0.0/104) holds the IPv4 addresses it maps.
  if (base.kind() === 'ipv6' && (base as ipaddr.IPv6).isIPv4MappedAddress() && bits >= 96) {
    base = (base as ipaddr.IPv6).toIPv4Address();
    bits -= 96;
  }
  if (address.kind() === 'ipv4')
    return base.kind() === 'ipv4' && (address as ipaddr.IPv4).match(base as ipaddr.IPv4, bits);
  return base.kind() === 'ipv6' && (address as ipaddr.IPv6).match(base as ipaddr.IPv6, bits);
}

function ruleAllows(rule: OutboundAllowRule, address: Address, port: number, host: string): boolean {
  if (rule.port !== undefined && rule.port !== port) return false;
  return rule.kind === 'host' ? rule.host === host : inRange(address, rule.range[0], rule.range[1]);
}

export type Verdict = { ok: true } | { ok: false; address: string; range: string };

/**
 * Whether a connection to `address`:`port`, made for the URL host `host` (a name, or the
 * address itself), is allowed: a public address always; any other only when an
 * EMEND_OUTBOUND_ALLOW rule names its host, its address or a range holding it (and the port,
 * when the rule gives one).
 */
export function judge(rules: readonly OutboundAllowRule[], addressText: string, port: number, host: string): Verdict {
  const address = normalise(addressText);
  const range = refusedRange(address);
  if (range === undefined) return { ok: true };
  const name = host.toLowerCase().replace(/\.$/, '');
  if (rules.some((r) => ruleAllows(r, address, port, name))) return { ok: true };
  return { ok: false, address: address.toString(), range };
}

/** True when a host rule lets this host name through on this port whatever it resolves to. */
export function hostAllowed(rules: readonly OutboundAllowRule[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/\.$/, '');
  return rules.some((r) => r.kind === 'host' && r.host === name && (r.port === undefined || r.port === port));
}
