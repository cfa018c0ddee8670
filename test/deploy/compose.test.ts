// compose.yaml and the Containerfile kept true to the code (issue 46), without a container
// engine: every variable compose.yaml sets is one the configuration reads (a *_FILE one among
// them, read from a file), the commands the image and compose.yaml run are the CLI's, and the
// image installs every Debian package `npm start` checks for. `npm run test:containers` runs them.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { PACKAGES } from '../../scripts/system-check.mjs';
import { main } from '../../src/cli/main.js';
import { loadConfig } from '../../src/config/config.js';

const root = join(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** compose.yaml as an engine reads it with nothing set: each ${NAME:-default} is its default. */
function composeWithDefaults(): Compose {
  const text = read('compose.yaml').replace(
    /\$\{([A-Z0-9_]+)(?::?-([^}]*))?\}/g,
    (_m, _name, fallback) => fallback ?? '',
  );
  return parse(text) as Compose;
}

interface Service {
  image?: string;
  command?: string[];
  environment?: Record<string, unknown>;
  secrets?: string[];
  security_opt?: string[];
  volumes?: string[];
}
interface Compose {
  services: Record<string, Service>;
  secrets: Record<string, { file: string }>;
  volumes: Record<string, unknown>;
}

const compose = composeWithDefaults();
const emendServices = Object.entries(compose.services).filter(([, s]) => s.image?.includes('emend'));
const dir = mkdtempSync(join(tmpdir(), 'emend-compose-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What a secret file holds in this test, by the variable that names it. */
const SECRET_VALUES: Record<string, string> = {
  DATABASE_URL_FILE: 'postgres://emend:pw@127.0.0.1:5432/emend',
  EMEND_SECRET_KEY_FILE: 'ab'.repeat(32),
};

/** The container's environment with each /run/secrets/<name> file made here, holding a valid value. */
function environmentWithSecretFiles(env: Record<string, unknown>): Record<string, string> {
  const out: Record<string, string> = {};
  // YAML reads an unquoted 2 as a number and an empty value as null; the container has the text.
  for (const [name, value] of Object.entries(env).map(([n, v]) => [n, String(v ?? '')] as const)) {
    if (!value.startsWith('/run/secrets/')) {
      out[name] = value;
      continue;
    }
    const file = join(dir, value.slice('/run/secrets/'.length));
    writeFileSync(file, `${SECRET_VALUES[name] ?? 'x'}\n`);
    out[name] = file;
  }
  return out;
}

describe('compose.yaml', () => {
  it('runs PostgreSQL, an API node and a scalable worker, each emend one on the same image', () => {
    expect(Object.keys(compose.services).sort()).toEqual(['api', 'postgres', 'worker']);
    expect(compose.services.api!.command).toEqual(['serve', '--no-worker']);
    expect(compose.services.worker!.command).toEqual(['worker']);
    expect(compose.services.api!.image).toBe(compose.services.worker!.image);
    // --scale worker=N: a fixed container name or host port would make a second replica collide.
    expect(compose.services.worker).not.toHaveProperty('container_name');
    expect(compose.services.worker).not.toHaveProperty('ports');
  });

  it.each(emendServices)(
    '%s: every variable it sets is one the configuration reads, secrets from files',
    (_name, s) => {
      const env = environmentWithSecretFiles(s.environment ?? {});
      const readNames = new Set<string>();
      const watched = new Proxy(env, {
        get(target, key) {
          if (typeof key === 'string') readNames.add(key);
          return Reflect.get(target, key);
        },
      });
      const config = loadConfig(watched);
      expect(Object.keys(env).filter((name) => !readNames.has(name))).toEqual([]);
      // The values arrived from the files, not as the files' paths.
      expect(config.databaseUrl).toBe(SECRET_VALUES.DATABASE_URL_FILE);
      // Every secret a variable names is one the service mounts, and compose declares.
      const mounted = new Set(s.secrets);
      for (const value of Object.values(env).filter((v) => v.startsWith(dir)))
        expect(mounted.has(value.slice(dir.length + 1))).toBe(true);
      for (const secret of s.secrets ?? []) expect(compose.secrets[secret]?.file).toMatch(/^\.\/secrets\//);
    },
  );

  it.each(emendServices)('%s: keeps its data dir on a named volume and is never privileged', (_name, s) => {
    const mounts = (s.volumes ?? []).map((v) => v.split(':'));
    const dataDir = mounts.find(([, target]) => target === '/var/lib/emend');
    expect(dataDir && dataDir[0]! in compose.volumes).toBe(true);
    expect(s).not.toHaveProperty('privileged');
    // bubblewrap's fresh /proc, its hostname and mounts (docs/operations.md).
    expect(s.security_opt).toEqual(expect.arrayContaining(['systempaths=unconfined', 'seccomp=unconfined']));
  });

  it('writes the secret files it reads with scripts/compose-secrets.sh', () => {
    const script = read('scripts/compose-secrets.sh');
    for (const [name, secret] of Object.entries(compose.secrets)) {
      expect(secret.file).toBe(`./secrets/${name}`);
      expect(script).toMatch(new RegExp(`^write ${name} `, 'm'));
    }
  });
});

describe('Containerfile', () => {
  const containerfile = read('Containerfile');
  const json = (instruction: string) => {
    const m = new RegExp(`^${instruction} (\\[.*\\])$`, 'm').exec(containerfile);
    return m ? (JSON.parse(m[1]!) as string[]) : undefined;
  };

  it('runs `tini -- emend serve` by default, and the commands compose.yaml gives are the CLI’s', async () => {
    expect(json('ENTRYPOINT')).toEqual(['tini', '--', 'emend']);
    expect(json('CMD')).toEqual(['serve']);
    const commands = [json('CMD')!, ...emendServices.map(([, s]) => s.command!)];
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      for (const [command, ...flags] of commands) {
        log.mockClear();
        expect(await main([command!, '--help'], {})).toBe(0);
        const usage = log.mock.calls.map((c) => String(c[0])).join('\n');
        expect(usage).toContain(`emend ${command}`);
        for (const flag of flags) expect(usage).toContain(flag);
      }
    } finally {
      log.mockRestore();
    }
  });

  it('installs every Debian package `npm start` checks for, PostgreSQL aside', () => {
    const installed = containerfile.slice(
      containerfile.indexOf('apt-get install'),
      containerfile.indexOf('rm -rf /var/lib/apt'),
    );
    const needed = PACKAGES.filter((p) => p.for.includes('start')).map((p) => p.name);
    expect(needed.length).toBeGreaterThan(5);
    for (const name of needed) expect(installed).toMatch(new RegExp(`(^|\\s)${name}(\\s|$)`));
  });

  it('sets only variables the configuration reads, and runs as a non-root user', () => {
    const env = /^ENV ((?:.*\\\n)*.*)$/m.exec(containerfile)![1]!;
    // NODE_ENV is Node's and its libraries', not emend's.
    const vars = Object.fromEntries([...env.matchAll(/([A-Z_]+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
    delete vars.NODE_ENV;
    const names = Object.keys(vars);
    expect(names).toContain('EMEND_DATA_DIR');
    const readNames = new Set<string>();
    loadConfig(
      new Proxy(vars, {
        get(target, key) {
          if (typeof key === 'string') readNames.add(key);
          return Reflect.get(target, key);
        },
      }),
    );
    expect(names.filter((n) => !readNames.has(n))).toEqual([]);
    expect(containerfile).toMatch(/^USER 10001:10001$/m);
    expect(containerfile).toMatch(/^HEALTHCHECK .* CMD \["emend-healthcheck"\]$/m);
    expect(containerfile).toContain('scripts/container-healthcheck.mjs /usr/local/bin/emend-healthcheck');
    expect(read('scripts/container-healthcheck.mjs')).toContain('/health');
  });
});
