import { createHash } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32 } from 'node:zlib';

/** A pure-Python package for the index: its module files and metadata. */
export interface FixturePackage {
  /** The distribution name, e.g. "emendfix-greet". */
  name: string;
  version: string;
  /** Paths inside the wheel (e.g. "emendfix_greet/__init__.py") → contents. */
  files: Record<string, string>;
}

/** A zip archive, entries stored (not compressed): all a wheel needs to be one. */
export function zip(entries: Array<[string, Buffer]>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const nameBytes = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(0, 6); // flags, method: stored
    local.writeUInt32LE(0x00210000, 10); // 1980-01-01 00:00
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(nameBytes.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(0, 8);
    central.writeUInt32LE(0x00210000, 12);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(nameBytes.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, data);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

const normalize = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

/** A py3-none-any wheel of the package: its files, METADATA, WHEEL and RECORD (with hashes). */
export function buildWheel(pkg: FixturePackage): { filename: string; bytes: Buffer } {
  const stem = `${pkg.name.replace(/[-.]+/g, '_')}-${pkg.version}`;
  const info = `${stem}.dist-info`;
  const entries: Array<[string, Buffer]> = Object.entries(pkg.files).map(([p, c]) => [p, Buffer.from(c)]);
  entries.push([
    `${info}/METADATA`,
    Buffer.from(`Metadata-Version: 2.1\nName: ${pkg.name}\nVersion: ${pkg.version}\n`),
  ]);
  entries.push([
    `${info}/WHEEL`,
    Buffer.from('Wheel-Version: 1.0\nGenerator: emend-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n'),
  ]);
  const hash = (b: Buffer) => createHash('sha256').update(b).digest('base64url');
  const record = [...entries.map(([p, b]) => `${p},sha256=${hash(b)},${b.length}`), `${info}/RECORD,,`].join('\n');
  entries.push([`${info}/RECORD`, Buffer.from(`${record}\n`)]);
  return { filename: `${stem}-py3-none-any.whl`, bytes: zip(entries) };
}

export interface PackageIndex {
  /** The PEP 503 simple index, e.g. http://127.0.0.1:PORT/simple/ (PIP_INDEX_URL). */
  url: string;
  /** host:port, for a setup allowlist. */
  hostPort: string;
  /** Distribution names pip asked for, in order. */
  asked: string[];
  close(): Promise<void>;
}

/** A wheel file as it is, named `<distribution>-<version>-<tags>.whl`. */
export interface WheelFile {
  filename: string;
  bytes: Buffer;
}

/**
 * Serves the packages (built as wheels) and the given wheel files as a PEP 503 simple index on
 * loopback, one wheel per distribution; everything else is 404.
 */
export async function servePackageIndex(packages: FixturePackage[], files: WheelFile[] = []): Promise<PackageIndex> {
  const wheels = new Map<string, WheelFile>();
  for (const pkg of packages) wheels.set(normalize(pkg.name), buildWheel(pkg));
  for (const file of files) wheels.set(normalize(file.filename.split('-')[0]!), file);
  const asked: string[] = [];
  const server: Server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    const project = /^\/simple\/([^/]+)\/?$/.exec(path);
    if (project) {
      asked.push(normalize(project[1]!));
      const wheel = wheels.get(normalize(project[1]!));
      if (!wheel) return void res.writeHead(404).end();
      const sha = createHash('sha256').update(wheel.bytes).digest('hex');
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(
        `<html><body><a href="/files/${wheel.filename}#sha256=${sha}">${wheel.filename}</a></body></html>`,
      );
    }
    const file = /^\/files\/([^/]+)$/.exec(path);
    const wheel = file && [...wheels.values()].find((w) => w.filename === file[1]);
    if (wheel) return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(wheel.bytes);
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/simple/`,
    hostPort: `127.0.0.1:${port}`,
    asked,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
