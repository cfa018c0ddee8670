/**
 * What a setup command inside the sandbox is given to reach the egress proxy
 * (src/sandbox/egress-proxy.ts). Its network namespace is empty but for loopback; a relay, run
 * inside it as the command's parent, listens on 127.0.0.1:RELAY_PORT there and carries each
 * connection to the proxy's Unix socket, bound in from outside. Every package manager is pointed
 * at that address: most read the proxy variables, npm/pnpm/yarn and pip have their own, and
 * the JVM tools (Maven, Gradle) need settings files, which the relay writes into HOME.
 */

/** Where the relay, its node and the proxy's socket appear inside the sandbox. */
export const EGRESS_DIR = '/run/emend';
export const EGRESS_SOCKET = `${EGRESS_DIR}/proxy.sock`;
/** The service's own node, bound beside (not inside: that directory is bound read-only whole). */
export const EGRESS_NODE = '/run/emend-node';
export const EGRESS_RELAY = `${EGRESS_DIR}/relay.cjs`;
/** The relay's port, on the sandbox's own loopback (each sandbox has its own network namespace). */
export const RELAY_PORT = 3128;

const PROXY_URL = `http://127.0.0.1:${RELAY_PORT}`;

/** The environment of a setup command: every tool that reads one is sent to the proxy. */
export function egressEnv(): Record<string, string> {
  return {
    HTTP_PROXY: PROXY_URL,
    HTTPS_PROXY: PROXY_URL,
    http_proxy: PROXY_URL,
    https_proxy: PROXY_URL,
    // A server a setup starts for itself, on `localhost`, stays local. Addresses go to the proxy:
    // an operator's registry on the host's loopback is named as 127.0.0.1:PORT in EMEND_SETUP_ALLOW,
    // and the sandbox's own loopback has nothing of the host's to reach directly.
    NO_PROXY: 'localhost',
    no_proxy: 'localhost',
    // npm and pnpm (and yarn 1, which reads npm's configuration)
    npm_config_proxy: PROXY_URL,
    npm_config_https_proxy: PROXY_URL,
    // yarn 1 and yarn 2+ (berry)
    YARN_PROXY: PROXY_URL,
    YARN_HTTPS_PROXY: PROXY_URL,
    YARN_HTTP_PROXY: PROXY_URL,
    PIP_PROXY: PROXY_URL,
    // One retry, not pip's five with backoff: the proxy asks a temporary DNS failure again itself and
    // otherwise refuses for good (a host outside the policy), and five retries of a refused index cost
    // 12 s per install attempt before the verdict could say which host was refused.
    PIP_RETRIES: '1',
    CARGO_HTTP_PROXY: PROXY_URL,
    // Every JVM (Gradle's daemon included) takes these; Maven's resolver also reads settings.xml below.
    JAVA_TOOL_OPTIONS: [
      `-Dhttp.proxyHost=127.0.0.1 -Dhttp.proxyPort=${RELAY_PORT}`,
      `-Dhttps.proxyHost=127.0.0.1 -Dhttps.proxyPort=${RELAY_PORT}`,
      '-Dhttp.nonProxyHosts=localhost|127.0.0.1',
    ].join(' '),
    // go reads HTTPS_PROXY itself; the module proxy and checksum database are its defaults, named
    // so that a repository's `direct` fallback to a VCS host is not what setup leans on.
    GOPROXY: 'https://proxy.golang.org',
    GOSUMDB: 'sum.golang.org',
  };
}

/** An operator's package mirrors (EMEND_NPM_REGISTRY, EMEND_PIP_INDEX_URL), as the configuration holds them. */
export interface PackageMirrors {
  npmRegistry?: string;
  pipIndexUrl?: string;
}

/**
 * A setup command with the network installs from the operator's mirrors: npm and pnpm (and yarn 1,
 * which reads npm's configuration) from `npm_config_registry`, pip from `PIP_INDEX_URL`. npm fetches
 * its lockfile's registry.npmjs.org URLs from the configured registry itself (`replace-registry-host`);
 * yarn 1's lockfile is pointed at it for the install (src/environments/registry-urls.ts). A
 * repository's own setting of the same name (its settings' variables) still wins.
 */
export function mirrorEnv(mirrors: PackageMirrors): Record<string, string> {
  return {
    ...(mirrors.npmRegistry !== undefined ? { npm_config_registry: `${mirrors.npmRegistry}/` } : {}),
    ...(mirrors.pipIndexUrl !== undefined ? { PIP_INDEX_URL: mirrors.pipIndexUrl } : {}),
  };
}

/** Each mirror's host and port, as EMEND_SETUP_ALLOW would name them: the operator's own endpoints are reached. */
export function mirrorDestinations(mirrors: PackageMirrors): string[] {
  return [mirrors.npmRegistry, mirrors.pipIndexUrl]
    .filter((u): u is string => u !== undefined)
    .map((u) => {
      const parsed = new URL(u);
      return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'https:' ? '443' : '80')}`;
    });
}

/** The host's CA bundle where Debian and its derivatives keep it, bound in with /etc/ssl/certs. */
export const SYSTEM_CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';

/**
 * A setup command with the network trusts what the host trusts: the system's CA bundle, which
 * holds the public roots and any the operator added (a private registry's, a TLS-inspecting
 * gateway's). Tools that do not read the system store on their own are pointed at it: node
 * (npm reads its own cafile setting, yarn and pnpm do not), pip, requests, curl, git, cargo.
 * A repository's own setting (its settings' variables) still wins.
 */
export function trustEnv(bundle: string): Record<string, string> {
  return {
    NODE_EXTRA_CA_CERTS: bundle,
    PIP_CERT: bundle,
    REQUESTS_CA_BUNDLE: bundle,
    SSL_CERT_FILE: bundle,
    CURL_CA_BUNDLE: bundle,
    GIT_SSL_CAINFO: bundle,
    CARGO_HTTP_CAINFO: bundle,
  };
}

/** A file the relay writes under HOME before the command starts, unless the file is there already. */
export interface ToolSetting {
  /** Relative to HOME. */
  path: string;
  text: string;
}

/** Maven's settings.xml and Gradle's gradle.properties, pointing at the relay. */
export function toolSettings(): ToolSetting[] {
  const proxy = (id: string, protocol: string) =>
    `    <proxy><id>${id}</id><active>true</active><protocol>${protocol}</protocol>` +
    `<host>127.0.0.1</host><port>${RELAY_PORT}</port><nonProxyHosts>localhost|127.0.0.1</nonProxyHosts></proxy>`;
  return [
    {
      path: '.m2/settings.xml',
      text: [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<!-- written by emend for the setup phase: the only way out is its egress proxy -->',
        '<settings xmlns="http://maven.apache.org/SETTINGS/1.0.0">',
        '  <proxies>',
        proxy('emend-http', 'http'),
        proxy('emend-https', 'https'),
        '  </proxies>',
        '</settings>',
        '',
      ].join('\n'),
    },
    {
      path: '.gradle/gradle.properties',
      text: [
        '# written by emend for the setup phase: the only way out is its egress proxy',
        'systemProp.http.proxyHost=127.0.0.1',
        `systemProp.http.proxyPort=${RELAY_PORT}`,
        'systemProp.https.proxyHost=127.0.0.1',
        `systemProp.https.proxyPort=${RELAY_PORT}`,
        'systemProp.http.nonProxyHosts=localhost|127.0.0.1',
        '',
      ].join('\n'),
    },
  ];
}

/**
 * The relay, run by the sandbox's node as the setup command's parent:
 * `node relay.cjs SOCKET PORT SETTINGS_JSON -- command...`. It writes the tool settings under
 * HOME (inside the sandbox, where a link planted there leads nowhere of the host's), listens,
 * then runs the command and exits with its status. Plain CommonJS with Node's own modules: it
 * runs wherever the service's node runs.
 */
export const RELAY_SOURCE = `'use strict';
const net = require('node:net');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { constants } = require('node:os');

const [socketPath, port, settingsJson, dashes, ...command] = process.argv.slice(2);
if (dashes !== '--' || command.length === 0) {
  console.error('emend relay: usage: relay.cjs SOCKET PORT SETTINGS -- command...');
  process.exit(125);
}
const home = process.env.HOME;
for (const { path: relative, text } of JSON.parse(settingsJson)) {
  if (!home) break;
  const file = path.join(home, relative);
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text, { flag: 'wx' });
  } catch {
    // there already (the repository's own, or an earlier setup's), or HOME is not writable: leave it
  }
}
const server = net.createServer((client) => {
  const upstream = net.connect(socketPath);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.pipe(upstream).pipe(client);
});
server.on('error', (err) => {
  console.error('emend relay: cannot listen on 127.0.0.1:' + port + ': ' + err.message);
  process.exit(125);
});
server.listen(Number(port), '127.0.0.1', () => {
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    console.error('emend relay: cannot run ' + command[0] + ': ' + err.message);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code === null ? 128 + (constants.signals[signal] || 0) : code));
});
`;
