import ipaddr from 'ipaddr.js';
import type { Config } from './config.js';
import { LLM_PROVIDERS, type LlmProvider } from './llm.js';

/**
 * Who can reach this server, and what it gives them: the facts behind the start-up warnings
 * (src/runtime/startup-banner.ts) and the panel's (GET /v1/me `server`). Issue 45.
 */

/** A host name or address that means this machine only: localhost, 127.0.0.0/8, ::1. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  // ipaddr.js's ranges, as the outbound policy reads addresses (an IPv4-mapped ::ffff:7f00:1 as 127.0.0.1).
  return ipaddr.isValid(h) && ipaddr.process(h).range() === 'loopback';
}

/** The service listens on an address others can reach (0.0.0.0, ::, a LAN or public address). */
export const listensBeyondLoopback = (config: Pick<Config, 'host'>) => !isLoopbackHost(config.host);

/** EMEND_BASE_URL names this machine: links made from it (invitations, hook URLs) work only here. */
export const baseUrlIsLocal = (config: Pick<Config, 'baseUrl'>) => isLoopbackHost(new URL(config.baseUrl).hostname);

/** The providers the operator gave a managed key for (OPENAI_API_KEY and friends), in the order chooseModel tries them. */
export const managedProviders = (config: Pick<Config, 'providerKeys'>): LlmProvider[] =>
  LLM_PROVIDERS.filter((p) => !!config.providerKeys[p]);

export const hasManagedModelKey = (config: Pick<Config, 'providerKeys'>) => managedProviders(config).length > 0;

/** What an operator should hear at start-up about how this server is set up, one sentence each. */
export function startupWarnings(config: Config): string[] {
  const warnings: string[] = [];
  const managed = hasManagedModelKey(config);
  if (!managed)
    warnings.push(
      'no model provider key is set (OPENAI_API_KEY, ANTHROPIC_API_KEY or GOOGLE_GENERATIVE_AI_API_KEY, or ' +
        'OPENAI_BASE_URL with a key for an Ollama or vLLM server): tasks are refused with 412 model_not_configured ' +
        'unless their account saves its own key (Account → Provider keys) and turns BYOK on',
    );
  if (listensBeyondLoopback(config) && config.demoTokens && managed)
    warnings.push(
      `listening on ${config.host}, beyond this machine, with demo tokens on and a managed model key: anyone who ` +
        'reaches the port can get a demo token (POST /v1/demo/token) and spend your key within the demo limits; ' +
        'set EMEND_DEMO_TOKENS=off, or HOST=127.0.0.1',
    );
  if (listensBeyondLoopback(config) && baseUrlIsLocal(config))
    warnings.push(
      `EMEND_BASE_URL is ${config.baseUrl} while listening on ${config.host}: invitation links, trigger hook URLs ` +
        'and the server in /docs point at localhost, which works only on this machine; set EMEND_BASE_URL to the ' +
        'address others reach',
    );
  return warnings;
}
