import { createHash } from 'node:crypto';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { c as createTar } from 'tar';

/** A version of a package for the registry: its files (package.json is written for it) and when it was published. */
export interface FixtureVersion {
  version: string;
  published: string;
  files: Record<string, string>;
  /** Written into its package.json and its registry document. */
  peerDependencies?: Record<string, string>;
  /** Written into its package.json (an install script); the document says hasInstallScript. */
  scripts?: Record<string, string>;
  /** Files given mode 0755 (a binary). */
  executable?: string[];
}

export interface NpmRegistry {
  /** npm_config_registry. */
  url: string;
  /** A version's registry entry as served: its tarball URL, sha1 and sha512 integrity (for lockfiles a test writes). */
  dist(name: string, version: string): { tarball: string; shasum: string; integrity: string };
  close(): Promise<void>;
}

/**
 * An npm registry on loopback serving packages' versions with their publish times, so that
 * what `npm install --before=<date>` picks can be told apart from the newest.
 */
export async function serveNpmRegistry(packages: Record<string, FixtureVersion[]>): Promise<NpmRegistry> {
  const tarballs = new Map<string, Buffer>();
  const work = mkdtempSync(join(tmpdir(), 'emend-npm-registry-'));
  for (const [name, versions] of Object.entries(packages))
    for (const v of versions) {
      const dir = join(work, name, v.version);
      mkdirSync(join(dir, 'package'), { recursive: true });
      const manifest = {
        name,
        version: v.version,
        main: 'index.js',
        peerDependencies: v.peerDependencies,
        scripts: v.scripts,
      };
      writeFileSync(join(dir, 'package', 'package.json'), JSON.stringify(manifest));
      for (const [path, content] of Object.entries(v.files)) {
        mkdirSync(dirname(join(dir, 'package', path)), { recursive: true });
        writeFileSync(join(dir, 'package', path), content, { mode: v.executable?.includes(path) ? 0o755 : 0o644 });
      }
      const file = join(dir, 'package.tgz');
      await createTar({ gzip: true, cwd: dir, file, portable: true }, ['package']);
      tarballs.set(`${name}-${v.version}.tgz`, readFileSync(file));
    }
  rmSync(work, { recursive: true, force: true });
  let base = '';
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    const name = path.slice(1);
    const versions = packages[name];
    if (versions) {
      const doc = {
        name,
        'dist-tags': { latest: versions[versions.length - 1]!.version },
        versions: Object.fromEntries(
          versions.map((v) => {
            const tgz = tarballs.get(`${name}-${v.version}.tgz`)!;
            return [
              v.version,
              {
                name,
                version: v.version,
                ...(v.peerDependencies ? { peerDependencies: v.peerDependencies } : {}),
                ...(v.scripts ? { scripts: v.scripts, hasInstallScript: true } : {}),
                dist: {
                  tarball: `${base}/${name}/-/${name}-${v.version}.tgz`,
                  integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
                  shasum: createHash('sha1').update(tgz).digest('hex'),
                },
              },
            ];
          }),
        ),
        time: Object.fromEntries(versions.map((v) => [v.version, v.published])),
      };
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc));
    }
    const tgz = /^\/[^/]+\/-\/([^/]+)$/.exec(path);
    const bytes = tgz && tarballs.get(tgz[1]!);
    if (bytes) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(bytes);
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dist = (name: string, version: string) => {
    const tgz = tarballs.get(`${name}-${version}.tgz`)!;
    return {
      tarball: `${base}/${name}/-/${name}-${version}.tgz`,
      shasum: createHash('sha1').update(tgz).digest('hex'),
      integrity: `sha512-${createHash('sha512').update(tgz).digest('base64')}`,
    };
  };
  return { url: `${base}/`, dist, close: () => new Promise((done) => server.close(() => done())) };
}

/**
 * The package-lock.json (lockfileVersion 3) of a root package `x` whose one dependency `name`
 * (range `^1.0.0`) is locked at `version`, fetched from `resolved` and checked against `integrity`.
 */
export function oneDependencyLockfile(name: string, locked: { version: string; resolved: string; integrity: string }) {
  return JSON.stringify({
    name: 'x',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'x', dependencies: { [name]: '^1.0.0' } },
      [`node_modules/${name}`]: locked,
    },
  });
}
