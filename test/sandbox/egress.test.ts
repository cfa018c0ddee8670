import { lookup as systemLookup } from 'node:dns';
import { existsSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox, SandboxResult } from '../../src/sandbox/types.js';
import { newDir, realSandbox, removeDirs } from './helpers.js';

/**
 * The setup phase's network: an egress proxy of the service, reached through a relay inside the
 * sandbox's own empty network namespace (src/sandbox/egress-*.ts). Its only way out goes to the
 * package registries and what the operator names. The refusals of private and metadata ranges
 * are decided on the resolver's answer, before any connection: the names resolve through the
 * resolver given here, and nothing is sent to those addresses.
 */

/** Names this test resolves itself: each to one address. */
const NAMES: Record<string, string> = {
  'loopback.setup.test': '127.0.0.1',
  'private.setup.test': '10.1.2.3',
  'metadata.setup.test': '169.254.169.254',
  'cgnat.setup.test': '100.100.100.200',
  'ula.setup.test': 'fd00::1',
};

const lookup: LookupFunction = (hostname, options, callback) => {
  const address = NAMES[hostname];
  if (address === undefined) return systemLookup(hostname, options, callback);
  const family = address.includes(':') ? 6 : 4;
  if (options.all) return callback(null, [{ address, family }]);
  callback(null, address, family);
};

let sandbox: Sandbox;
let allowed: Server;
let other: Server;
/** Requests each local server was sent: the refused ones must never arrive. */
const hits = { allowed: 0, other: 0 };
let allowedPort: number;
let otherPort: number;

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

beforeAll(async () => {
  other = createServer((_req, res) => {
    hits.other++;
    res.end('the other server\n');
  });
  otherPort = await listen(other);
  allowed = createServer((req, res) => {
    hits.allowed++;
    if (req.url === '/redirect') {
      res.writeHead(302, { location: `http://127.0.0.1:${otherPort}/` });
      return res.end();
    }
    res.end('the allowed server\n');
  });
  allowedPort = await listen(allowed);
  ({ sandbox } = await realSandbox(
    {
      EMEND_SANDBOX_SETUP_NETWORK: 'proxy',
      EMEND_SANDBOX_MEMORY_MB: '1024',
      // a local index named with its port (the only way a loopback destination is reached), and
      // names on the allowlist that resolve where they must not lead
      EMEND_SETUP_ALLOW: [`127.0.0.1:${allowedPort}`, ...Object.keys(NAMES)].join(','),
    },
    { lookup },
  ));
});
afterAll(async () => {
  allowed.close();
  other.close();
  removeDirs();
});

/**
 * A client inside the sandbox that uses the proxy variables (Python's urllib, as pip does): each
 * URL's status, or the error it got.
 */
async function fetchInside(
  urls: string[],
  env: Record<string, string> = {},
): Promise<{ lines: string[]; result: SandboxResult }> {
  const script = [
    'import sys, urllib.request, urllib.error',
    'for url in sys.argv[1:]:',
    '    try:',
    '        r = urllib.request.urlopen(url, timeout=10)',
    '        print(url, "OK", r.status, r.read().decode().strip())',
    '    except urllib.error.HTTPError as e:',
    '        print(url, "HTTP", e.code, e.read().decode().strip())',
    '    except Exception as e:',
    '        print(url, "ERROR", str(e))',
  ].join('\n');
  const result = await sandbox.run({
    command: ['python3', '-c', script, ...urls],
    workdir: newDir(),
    network: true,
    env: { HOME: '/workspace', ...env },
  });
  expect(result.exitCode, result.stderr).toBe(0);
  return { lines: result.stdout.trim().split('\n'), result };
}

const lineFor = (lines: string[], url: string) => lines.find((l) => l.startsWith(`${url} `)) ?? '';

describe('setup through the egress proxy', () => {
  it('reaches a destination the operator named with its port, and counts the bytes', async () => {
    const url = `http://127.0.0.1:${allowedPort}/`;
    // no proxy setting of its own: 127.0.0.1 goes to the proxy like any address
    const { lines, result } = await fetchInside([url]);
    expect(lineFor(lines, url)).toBe(`${url} OK 200 the allowed server`);
    expect(result.egress).toEqual([
      expect.objectContaining({ host: '127.0.0.1', port: allowedPort, allowed: true, requests: 1 }),
    ]);
    expect(result.egress![0]!.bytes_in).toBeGreaterThan(0);
    expect(result.egress![0]!.bytes_out).toBeGreaterThan(0);
  });

  it('trusts the host’s CA bundle in setup (a TLS-inspecting gateway’s root is there), never in the test phase', async () => {
    const printTrust = [
      'sh',
      '-c',
      'echo "node=$NODE_EXTRA_CA_CERTS pip=$PIP_CERT"; head -c 27 "$NODE_EXTRA_CA_CERTS"',
    ];
    const setup = await sandbox.run({ command: printTrust, workdir: newDir(), network: true, env: {} });
    const bundle = '/etc/ssl/certs/ca-certificates.crt';
    // Read inside the sandbox: the bundle is bound in with /etc/ssl/certs. A host without one
    // (no ca-certificates package) names none.
    if (existsSync(bundle)) expect(setup.stdout).toBe(`node=${bundle} pip=${bundle}\n-----BEGIN CERTIFICATE-----`);
    else expect(setup.stdout).toBe('node= pip=\n');
    // A repository's own setting wins.
    const own = await sandbox.run({
      command: ['sh', '-c', 'echo "$PIP_CERT"'],
      workdir: newDir(),
      network: true,
      env: { PIP_CERT: '/workspace/corp.pem' },
    });
    expect(own.stdout.trim()).toBe('/workspace/corp.pem');
    const tests = await sandbox.run({ command: ['sh', '-c', 'echo "node=$NODE_EXTRA_CA_CERTS"'], workdir: newDir() });
    expect(tests.stdout.trim()).toBe('node=');
  });

  it('refuses loopback and unspecified addresses, a host not on the list, and each says why', async () => {
    const before = { ...hits };
    const urls = {
      loopback: `http://127.0.0.1:${otherPort}/`,
      v6loopback: `http://[::1]:${otherPort}/`,
      unspecified: `http://0.0.0.0:${otherPort}/`,
      unlisted: 'http://example.org/',
      unlistedTls: 'https://example.org/',
      resolvesToLoopback: `http://loopback.setup.test:${otherPort}/`,
      resolvesToLoopbackStd: 'http://loopback.setup.test/',
    };
    // NO_PROXY emptied: the loopback addresses go to the proxy too (by default local servers of the
    // setup itself are reached directly, on the sandbox's own loopback, where nothing of the host is)
    const { lines, result } = await fetchInside(Object.values(urls), { NO_PROXY: '', no_proxy: '' });
    for (const url of Object.values(urls))
      expect(lineFor(lines, url), url).toMatch(/ (HTTP 403 emend refused|ERROR .*403)/);
    const reasons = Object.fromEntries(result.egress!.map((r) => [`${r.host}:${r.port}`, r.reason]));
    expect(reasons[`127.0.0.1:${otherPort}`]).toBe(
      'an address (127.0.0.1) not named with its port in EMEND_SETUP_ALLOW',
    );
    expect(reasons[`::1:${otherPort}`]).toMatch(/an address \(::1\) not named with its port/);
    expect(reasons[`0.0.0.0:${otherPort}`]).toMatch(/an address \(0\.0\.0\.0\) not named/);
    expect(reasons['example.org:80']).toMatch(/not on the setup allowlist/);
    expect(reasons['example.org:443']).toMatch(/not on the setup allowlist/);
    // named without a port: public addresses only
    expect(reasons[`loopback.setup.test:${otherPort}`]).toMatch(/not on the setup allowlist/);
    expect(reasons['loopback.setup.test:80']).toBe('loopback.setup.test resolves to 127.0.0.1, a loopback address');
    expect(result.egress!.every((r) => !r.allowed)).toBe(true);
    expect(hits).toEqual(before);
  });

  it('refuses a redirect to an address that is not allowed', async () => {
    const before = { ...hits };
    const url = `http://127.0.0.1:${allowedPort}/redirect`;
    const result = await sandbox.run({
      command: [
        'python3',
        '-c',
        `import urllib.request as u\ntry:\n  u.urlopen("${url}", timeout=10)\nexcept Exception as e:\n  print("refused:", e)`,
      ],
      workdir: newDir(),
      network: true,
      env: { HOME: '/workspace', NO_PROXY: '', no_proxy: '' },
    });
    expect(result.stdout).toContain('refused: HTTP Error 403');
    expect(hits.allowed).toBe(before.allowed + 1);
    expect(hits.other).toBe(before.other);
    expect(result.egress?.find((r) => r.port === otherPort)).toMatchObject({ allowed: false });
  });

  it('refuses names that resolve to private, metadata, carrier-grade NAT and unique-local addresses, before connecting', async () => {
    const names = ['private', 'metadata', 'cgnat', 'ula'].map((n) => `${n}.setup.test`);
    const { result } = await fetchInside(names.map((n) => `http://${n}/`));
    const reasons = Object.fromEntries(result.egress!.map((r) => [r.host, r.reason]));
    expect(reasons).toEqual({
      'private.setup.test': 'private.setup.test resolves to 10.1.2.3, a private (RFC 1918) address',
      'metadata.setup.test': 'metadata.setup.test resolves to 169.254.169.254, a link-local address',
      'cgnat.setup.test': 'cgnat.setup.test resolves to 100.100.100.200, a carrier-grade NAT (100.64.0.0/10) address',
      'ula.setup.test': 'ula.setup.test resolves to fd00::1, a private (unique local, fc00::/7) address',
    });
    // refused on the resolver's answer, in the proxy's decision: a refused request is answered 403
    // before the proxy is given anything to connect with, so none of them was ever connected to
    expect(result.egress!.map((r) => [r.host, r.allowed, r.requests])).toEqual(
      expect.arrayContaining(names.map((n) => [n, false, 1])),
    );
    expect(result.egress!.some((r) => r.allowed)).toBe(false);
  });

  it('leaves a process that ignores the proxy no network at all', async () => {
    const result = await sandbox.run({
      command: [
        'python3',
        '-c',
        [
          'import socket',
          `for host, port in [("127.0.0.1", ${allowedPort}), ("127.0.0.1", ${otherPort})]:`,
          '    try:',
          '        socket.create_connection((host, port), timeout=5); print(host, port, "connected")',
          '    except OSError as e:',
          '        print(host, port, "no:", e.strerror)',
          'print(sorted(n for _, n in socket.if_nameindex()))',
          // localhost is the sandbox's own loopback: test runners start servers on it (vitest's workers)
          'print("localhost is", socket.gethostbyname("localhost"))',
        ].join('\n'),
      ],
      workdir: newDir(),
      network: true,
      env: { HOME: '/workspace' },
    });
    expect(result.stdout).toContain(`127.0.0.1 ${allowedPort} no: Connection refused`);
    expect(result.stdout).toContain(`127.0.0.1 ${otherPort} no: Connection refused`);
    expect(result.stdout).toContain("['lo']");
    expect(result.stdout).toContain('localhost is 127.0.0.1');
    expect(hits.other).toBe(0);
  });

  it('installs a fixture project’s dependency from the npm registry, through the proxy only', async () => {
    const workdir = newDir();
    const result = await sandbox.run({
      command: [
        'sh',
        '-c',
        'cd /workspace && printf \'{"name":"f","version":"1.0.0","private":true,"dependencies":{"is-number":"7.0.0"}}\' ' +
          '> package.json && npm install --no-audit --no-fund --loglevel=error && node -p "require(\'is-number\')(5)" && ' +
          // the relay left the JVM tools their proxy settings in HOME
          'grep -q 127.0.0.1 .m2/settings.xml .gradle/gradle.properties && echo settings written',
      ],
      workdir,
      network: true,
      env: { HOME: '/workspace' },
    });
    expect(result.exitCode, result.stdout + result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n').slice(-2)).toEqual(['true', 'settings written']);
    const registry = result.egress?.find((r) => r.host === 'registry.npmjs.org');
    expect(registry).toMatchObject({ port: 443, allowed: true });
    expect(registry!.bytes_in).toBeGreaterThan(1000);
    expect(result.egress!.every((r) => r.allowed)).toBe(true);
  });
});
