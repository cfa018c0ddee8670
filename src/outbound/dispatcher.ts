import type { LookupAddress } from 'node:dns';
import { type LookupFunction, isIP } from 'node:net';
import { Agent, buildConnector } from 'undici';
import type { OutboundAllowRule } from '../config/outbound.js';
import { hostAllowed, judge } from './address-policy.js';
import { OutboundRefused } from './refused.js';

const CONNECT_TIMEOUT_MS = 10_000;
/** Connectors kept, one per port (their lookup knows the port); ports beyond this get a fresh one each time. */
const MAX_PORTS = 64;

/**
 * The name resolver net.connect calls, wrapped: every address a host name resolves to is
 * judged before any connection is made to it, so a name that resolves to a public address
 * when the URL is saved and to 127.0.0.1 when it is used (DNS rebinding) is refused at use.
 */
function guardedLookup(rules: readonly OutboundAllowRule[], port: number, resolve: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, found) => {
      if (err) return callback(err, '', 0);
      const addresses = (Array.isArray(found) ? found : [{ address: found, family: isIP(found) }]) as LookupAddress[];
      if (!hostAllowed(rules, hostname, port)) {
        for (const a of addresses) {
          const verdict = judge(rules, a.address, port, hostname);
          if (!verdict.ok)
            return callback(new OutboundRefused('the URL', hostname, verdict.address, verdict.range), '', 0);
        }
      }
      if (options.all) return callback(null, addresses);
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`${hostname} resolved to no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}

/**
 * An undici Agent whose every connection is judged by the outbound policy: an IP literal in
 * the URL before connecting, a host name through the resolver hook above, and the address the
 * socket actually reached once connected. Redirects make new connections, so each hop is
 * judged the same way.
 */
export function guardedAgent(rules: readonly OutboundAllowRule[], resolve: LookupFunction): Agent {
  const byPort = new Map<number, buildConnector.connector>();
  const connectorFor = (port: number) => {
    let connector = byPort.get(port);
    if (!connector) {
      connector = buildConnector({ lookup: guardedLookup(rules, port, resolve), timeout: CONNECT_TIMEOUT_MS });
      if (byPort.size < MAX_PORTS) byPort.set(port, connector);
    }
    return connector;
  };
  return new Agent({
    connect(opts, callback) {
      const port = Number(opts.port) || (opts.protocol === 'https:' ? 443 : 80);
      const host = opts.hostname;
      // net.connect skips the resolver for an address, so a literal is judged here.
      if (isIP(host)) {
        const verdict = judge(rules, host, port, host);
        if (!verdict.ok) return callback(new OutboundRefused('the URL', host, verdict.address, verdict.range), null);
      }
      connectorFor(port)(opts, (err, socket) => {
        if (err || !socket) return callback(err ?? new Error('no connection'), null);
        const remote = socket.remoteAddress;
        const verdict = remote ? judge(rules, remote, port, host) : undefined;
        if (!verdict?.ok) {
          socket.destroy();
          return callback(
            verdict
              ? new OutboundRefused('the URL', host, verdict.address, verdict.range)
              : new Error(`the connection to ${host} closed before its address could be checked`),
            null,
          );
        }
        callback(null, socket);
      });
    },
  });
}
