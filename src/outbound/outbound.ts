import { lookup as dnsLookup } from 'node:dns';
import { type LookupFunction, isIP } from 'node:net';
import { type RequestInfo, type RequestInit, fetch as undiciFetch } from 'undici';
import type { OutboundAllowRule } from '../config/outbound.js';
import { hostAllowed, judge } from './address-policy.js';
import { guardedAgent } from './dispatcher.js';
import { OutboundRefused, refusalIn } from './refused.js';

/** How long a save-time check waits for the name to resolve before leaving it to the call-time check. */
const RESOLVE_TIMEOUT_MS = 5_000;

/**
 * The one way to fetch a URL a user gave (a BYOK base_url, later webhooks): loopback,
 * link-local, private, CGNAT, multicast, unspecified and reserved addresses are refused unless
 * the operator allows them (EMEND_OUTBOUND_ALLOW). The operator's own endpoints
 * (OPENAI_BASE_URL…, the code host) do not come here.
 */
export interface Outbound {
  /**
   * A fetch whose every connection is judged on the address actually reached; a refusal is
   * thrown as OutboundRefused naming `subject` (e.g. `base_url`), never wrapped.
   */
  fetchFor(subject: string): typeof fetch;
  /**
   * The save-time check of a URL: an address in it, or every address its host resolves to now.
   * A name that does not resolve (or not in time) passes here; the call-time check still holds.
   */
  check(subject: string, url: string): Promise<void>;
  close(): Promise<void>;
}

function resolveAll(resolve: LookupFunction, host: string): Promise<string[] | undefined> {
  return new Promise((done) => {
    const timer = setTimeout(() => done(undefined), RESOLVE_TIMEOUT_MS);
    resolve(host, { all: true }, (err, found) => {
      clearTimeout(timer);
      if (err) return done(undefined);
      done(Array.isArray(found) ? found.map((a) => a.address) : [found]);
    });
  });
}

export function createOutbound(
  rules: readonly OutboundAllowRule[],
  options: { lookup?: LookupFunction } = {},
): Outbound {
  const resolve = options.lookup ?? (dnsLookup as LookupFunction);
  const agent = guardedAgent(rules, resolve);
  return {
    fetchFor: (subject) => async (input, init) => {
      try {
        // undici's own fetch with its own Agent (one package, one version); its Request and
        // Response are the WHATWG ones the callers (the AI SDK, list-models) use.
        const response = await undiciFetch(input as RequestInfo, { ...(init as RequestInit), dispatcher: agent });
        return response as unknown as Response;
      } catch (err) {
        const refused = refusalIn(err);
        throw refused ? refused.about(subject) : err;
      }
    },
    async check(subject, raw) {
      const url = new URL(raw);
      const port = Number(url.port) || (url.protocol === 'https:' ? 443 : 80);
      const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
      if (isIP(host) === 0 && hostAllowed(rules, host, port)) return;
      const addresses = isIP(host) !== 0 ? [host] : ((await resolveAll(resolve, host)) ?? []);
      for (const address of addresses) {
        const verdict = judge(rules, address, port, host);
        if (!verdict.ok) throw new OutboundRefused(subject, host, verdict.address, verdict.range);
      }
    },
    close: () => agent.close(),
  };
}
