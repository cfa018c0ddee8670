import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import type { LookupFunction } from 'node:net';
import { RELAY_PORT, egressEnv, toolSettings } from '../../src/sandbox/egress-env.js';
import { SetupRefused, setupFetch } from '../../src/sandbox/egress-fetch.js';
import { DEFAULT_SETUP_HOSTS, decideHost, refusedAddress } from '../../src/sandbox/egress-policy.js';

/**
 * The setup phase's policy, as pure decisions (the proxy's end-to-end behaviour:
 * test/sandbox/egress.test.ts), and the configuration generated for the package managers
 * that cannot be run here (Maven, Gradle, cargo, go).
 */

const rules = (allow: string) => loadConfig({ EMEND_SETUP_ALLOW: allow }).sandbox.setupAllow;

const verdict = (allow: string, host: string, port: number, address: string) => {
  const decision = decideHost(rules(allow), host, port);
  return decision.ok ? (refusedAddress(address, decision, host, port) ?? 'allowed') : decision.reason;
};

describe('the setup policy', () => {
  it('lets the public registries of each ecosystem through on 80 and 443, on public addresses', () => {
    for (const host of [
      'registry.npmjs.org',
      'files.pythonhosted.org',
      'index.crates.io',
      'proxy.golang.org',
      'sum.golang.org',
      'repo.maven.apache.org',
      'plugins.gradle.org',
      'rubygems.org',
      'codeload.github.com',
    ])
      expect(DEFAULT_SETUP_HOSTS).toContain(host);
    expect(verdict('', 'registry.npmjs.org', 443, '104.16.1.35')).toBe('allowed');
    expect(verdict('', 'REGISTRY.NPMJS.ORG.', 443, '104.16.1.35')).toBe('allowed');
    expect(verdict('', 'registry.npmjs.org', 8443, '104.16.1.35')).toMatch(/^port 8443/);
  });

  it('refuses a registry name that resolves to loopback, private, link-local or metadata addresses', () => {
    for (const [address, words] of [
      ['127.0.0.1', 'a loopback address'],
      ['10.0.0.8', 'a private (RFC 1918) address'],
      ['192.168.1.1', 'a private (RFC 1918) address'],
      ['169.254.169.254', 'a link-local address'],
      ['100.100.100.200', 'a carrier-grade NAT (100.64.0.0/10) address'],
      ['::ffff:127.0.0.1', 'a loopback address'],
      ['fd00:ec2::254', 'a private (unique local, fc00::/7) address'],
      ['224.0.0.1', 'a multicast address'],
      ['0.0.0.0', 'an unspecified address'],
    ] as const)
      expect(verdict('', 'pypi.org', 443, address)).toBe(
        `pypi.org resolves to ${address.replace('::ffff:', '')}, ${words}`,
      );
    // the documentation ranges hold no private service: a build machine's registry gateway can live there
    expect(verdict('', 'pypi.org', 443, '203.0.113.80')).toBe('allowed');
  });

  it('refuses what is not on the list before anything is resolved, and address literals not named', () => {
    expect(verdict('', 'example.org', 443, '93.184.215.14')).toMatch(/example\.org is not on the setup allowlist/);
    expect(verdict('', '104.16.1.35', 443, '104.16.1.35')).toMatch(/an address \(104\.16\.1\.35\) not named/);
    expect(verdict('', '203.0.113.80', 443, '203.0.113.80')).toMatch(/not named with its port/);
  });

  it('takes the operator’s hosts: a name alone on public addresses, a host:port on any', () => {
    expect(verdict('npm.example.com', 'npm.example.com', 443, '198.41.0.4')).toBe('allowed');
    expect(verdict('npm.example.com', 'npm.example.com', 443, '10.0.0.4')).toMatch(/a private \(RFC 1918\) address/);
    expect(verdict('npm.example.com', 'npm.example.com', 4873, '198.41.0.4')).toMatch(/not on the setup allowlist/);
    expect(verdict('npm.internal:4873', 'npm.internal', 4873, '10.0.0.4')).toBe('allowed');
    expect(verdict('npm.internal:4873', 'npm.internal', 4874, '10.0.0.4')).toMatch(/not on the setup allowlist/);
    expect(verdict('127.0.0.1:8080', '127.0.0.1', 8080, '127.0.0.1')).toBe('allowed');
    expect(verdict('127.0.0.1:8080', '127.0.0.1', 8081, '127.0.0.1')).toMatch(/not named with its port/);
    expect(verdict('[::1]:8080', '[::1]', 8080, '::1')).toBe('allowed');
  });
});

describe('the configuration generated for the package managers', () => {
  const proxy = `http://127.0.0.1:${RELAY_PORT}`;

  it('points every tool that reads the environment at the relay', () => {
    const env = egressEnv();
    for (const name of [
      'HTTP_PROXY',
      'HTTPS_PROXY',
      'http_proxy',
      'https_proxy',
      'npm_config_proxy',
      'npm_config_https_proxy',
      'YARN_HTTP_PROXY',
      'YARN_HTTPS_PROXY',
      'PIP_PROXY',
      'CARGO_HTTP_PROXY',
    ])
      expect(env[name], name).toBe(proxy);
    // go reads HTTPS_PROXY; its module proxy and checksum database are on the list
    expect(env.GOPROXY).toBe('https://proxy.golang.org');
    expect(DEFAULT_SETUP_HOSTS).toContain(new URL(env.GOPROXY!).hostname);
    expect(env.GOSUMDB).toBe('sum.golang.org');
    expect(env.JAVA_TOOL_OPTIONS).toContain(`-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=${RELAY_PORT}`);
  });

  it('writes Maven’s settings.xml and Gradle’s gradle.properties with the relay as proxy', () => {
    const files = Object.fromEntries(toolSettings().map((f) => [f.path, f.text]));
    const maven = files['.m2/settings.xml']!;
    for (const protocol of ['http', 'https'])
      expect(maven).toContain(`<protocol>${protocol}</protocol><host>127.0.0.1</host><port>${RELAY_PORT}</port>`);
    expect(maven).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n/);
    const gradle = files['.gradle/gradle.properties']!;
    expect(gradle).toContain(`systemProp.https.proxyPort=${RELAY_PORT}`);
    expect(gradle).toContain('systemProp.https.proxyHost=127.0.0.1');
    expect(gradle).toContain(`systemProp.http.proxyPort=${RELAY_PORT}`);
  });
});

describe('downloads made for a setup (node, pnpm, yarn)', () => {
  it('are refused by the same policy before any connection: a name on the list resolving to a private or metadata address, a name off it, a literal', async () => {
    const asked: string[] = [];
    // the test's own resolver: nothing is looked up on the network, and what it answers is judged
    const lookup: LookupFunction = (hostname, options, callback) => {
      asked.push(hostname);
      const address = hostname === 'registry.npmjs.org' ? '10.1.2.3' : '169.254.169.254';
      if (options.all) return callback(null, [{ address, family: 4 }]);
      callback(null, address, 4);
    };
    const fetchFor = setupFetch(rules('metadata.example.com'), lookup);
    const refusal = (url: string) =>
      fetchFor(url).then(
        () => 'connected',
        (err: Error) => (err.cause instanceof SetupRefused ? err.cause.message : `other: ${err.cause ?? err}`),
      );
    expect(await refusal('https://registry.npmjs.org/pnpm')).toBe(
      'the setup policy refused registry.npmjs.org:443: registry.npmjs.org resolves to 10.1.2.3, a private (RFC 1918) address',
    );
    expect(await refusal('http://metadata.example.com/latest/meta-data/')).toBe(
      'the setup policy refused metadata.example.com:80: metadata.example.com resolves to 169.254.169.254, a link-local address',
    );
    expect(await refusal('http://example.org/')).toMatch(/example\.org is not on the setup allowlist/);
    expect(await refusal('http://10.0.0.8/')).toMatch(/an address \(10\.0\.0\.8\) not named with its port/);
    // the name off the list and the literal were refused before anything was resolved
    expect(asked).toEqual(['registry.npmjs.org', 'metadata.example.com']);
  });
});
