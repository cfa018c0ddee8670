import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import { type VariableSchema, refuse } from './env.js';

/**
 * One EMEND_OUTBOUND_ALLOW entry: an address range (a single address is a /32 or /128), or a
 * host name as written in the URL, each optionally for one port only.
 */
export type OutboundAllowRule =
  | { kind: 'range'; text: string; range: [ipaddr.IPv4 | ipaddr.IPv6, number]; port?: number }
  | { kind: 'host'; text: string; host: string; port?: number };

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

class BadEntry extends Error {}

const portOf = (p: string) => {
  const n = Number(p);
  if (!/^\d{1,5}$/.test(p) || n < 1 || n > 65_535) throw new BadEntry(`port ${p} is not 1-65535`);
  return n;
};

function rule(entry: string): OutboundAllowRule {
  if (entry.includes('/')) {
    try {
      return { kind: 'range', text: entry, range: ipaddr.parseCIDR(entry) };
    } catch {
      throw new BadEntry('not an address range');
    }
  }
  const bracketed = /^\[([^\]]+)\](?::(.*))?$/.exec(entry);
  if (bracketed) {
    if (isIP(bracketed[1]!) !== 6) throw new BadEntry('not an IPv6 address');
    const addr = ipaddr.IPv6.parse(bracketed[1]!);
    return {
      kind: 'range',
      text: entry,
      range: [addr, 128],
      port: bracketed[2] === undefined ? undefined : portOf(bracketed[2]),
    };
  }
  if (isIP(entry) === 6) return { kind: 'range', text: entry, range: [ipaddr.IPv6.parse(entry), 128] };
  const [host = '', port, ...more] = entry.split(':');
  if (more.length > 0) throw new BadEntry('an IPv6 address with a port goes in brackets');
  const p = port === undefined ? undefined : portOf(port);
  if (isIP(host) === 4) return { kind: 'range', text: entry, range: [ipaddr.IPv4.parse(host), 32], port: p };
  const lower = host.toLowerCase().replace(/\.$/, '');
  if (!HOST_NAME.test(lower) || /^[\d.]+$/.test(lower)) throw new BadEntry('not an address, range or host name');
  return { kind: 'host', text: entry, host: lower, port: p };
}

/**
 * EMEND_OUTBOUND_ALLOW: entries separated by commas or spaces, each one of
 * `10.0.0.0/8` or `fd00::/8` (a range, any port), `127.0.0.1` or `::1` (one address),
 * `127.0.0.1:11434` or `[::1]:11434` (one address, one port), `ollama.internal` or
 * `ollama.internal:11434` (a host name as written in the URL, whatever it resolves to).
 */
export const outboundAllow: VariableSchema<OutboundAllowRule[]> = z.string().transform((raw, ctx) => {
  const rules: OutboundAllowRule[] = [];
  for (const entry of raw.split(/[\s,]+/).filter((e) => e !== '')) {
    try {
      rules.push(rule(entry));
    } catch (err) {
      if (!(err instanceof BadEntry)) throw err;
      return refuse(
        ctx,
        `"${entry}": ${err.message}; expected entries like 10.0.0.0/8, 127.0.0.1:11434, [::1]:11434 or ` +
          `ollama.internal:11434, separated by commas`,
      );
    }
  }
  return rules;
});

/**
 * EMEND_SETUP_ALLOW: hosts the setup phase may reach besides the public registries, as
 * EMEND_OUTBOUND_ALLOW writes them. A host name alone is reached on its public addresses only;
 * a private or loopback destination (a private registry, a test's local index) must be named
 * with its port, `npm.internal:4873` or `127.0.0.1:8080`, and then only that port is reached.
 * Ranges are not taken: a setup reaches named places, not networks.
 */
export const setupAllow: VariableSchema<OutboundAllowRule[]> = outboundAllow.transform((rules, ctx) => {
  for (const rule of rules) {
    if (
      rule.kind === 'range' &&
      (rule.port === undefined ||
        !['ipv4', 'ipv6'].includes(rule.range[0].kind()) ||
        rule.range[1] < (rule.range[0].kind() === 'ipv4' ? 32 : 128))
    )
      return refuse(
        ctx,
        `"${rule.text}": an address must be given with its port (127.0.0.1:8080, [::1]:8080), and ranges are not taken`,
      );
  }
  return rules;
});
