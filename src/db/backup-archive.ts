import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import { createGunzip, createGzip } from 'node:zlib';

/**
 * A gzip-compressed ustar archive of regular files and directories, the format of `emend backup`:
 * `tar tzf` and `tar xzf` read it. Only what the backup holds is supported (no links, no long
 * names beyond ustar's 255 characters); anything else in an archive is refused on reading.
 */

const BLOCK = 512;

export interface ArchiveEntry {
  /** Relative, with '/' separators; a directory's ends in '/'. */
  path: string;
  mode: number;
  /** A file's content; none for a directory. */
  content?: Buffer;
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

function header(entry: ArchiveEntry, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK);
  let name = entry.path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    const at = name.slice(0, 156).lastIndexOf('/');
    if (at <= 0 || Buffer.byteLength(name.slice(at + 1)) > 100) throw new Error(`path too long: ${name}`);
    prefix = name.slice(0, at);
    name = name.slice(at + 1);
  }
  h.write(name, 0, 100, 'utf8');
  h.write(octal(entry.mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(entry.content?.length ?? 0, 12), 124, 'ascii');
  h.write(octal(mtime, 12), 136, 'ascii');
  h.write(' '.repeat(8), 148, 'ascii');
  h.write(entry.content ? '0' : '5', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

async function put(out: Writable, chunk: Buffer): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** Writes the entries `entries` yields to a new archive at `path` (mode 0600: it may hold a key). */
export async function writeArchive(
  path: string,
  entries: AsyncIterable<ArchiveEntry>,
  now = new Date(),
): Promise<void> {
  const file = createWriteStream(path, { mode: 0o600, flags: 'wx' });
  const gzip = createGzip();
  gzip.pipe(file);
  const mtime = Math.floor(now.getTime() / 1000);
  const done = once(file, 'close');
  try {
    for await (const entry of entries) {
      await put(gzip, header(entry, mtime));
      if (entry.content && entry.content.length > 0) {
        await put(gzip, entry.content);
        const pad = (BLOCK - (entry.content.length % BLOCK)) % BLOCK;
        if (pad) await put(gzip, Buffer.alloc(pad));
      }
    }
    await put(gzip, Buffer.alloc(BLOCK * 2));
  } finally {
    gzip.end();
  }
  await done;
}

function field(h: Buffer, start: number, length: number): string {
  const raw = h.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString('utf8');
}

/** The entries of the archive at `path`, in order; refuses what `writeArchive` would not write. */
export async function* readArchive(path: string): AsyncGenerator<ArchiveEntry> {
  let pending: Buffer = Buffer.alloc(0);
  let current: { path: string; mode: number; size: number } | undefined;
  const stream = createReadStream(path).pipe(createGunzip());
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      if (current) {
        const padded = Math.ceil(current.size / BLOCK) * BLOCK;
        if (pending.length < padded) break;
        yield { path: current.path, mode: current.mode, content: Buffer.from(pending.subarray(0, current.size)) };
        pending = pending.subarray(padded);
        current = undefined;
        continue;
      }
      if (pending.length < BLOCK) break;
      const h = pending.subarray(0, BLOCK);
      pending = pending.subarray(BLOCK);
      if (h.every((b) => b === 0)) return;
      if (field(h, 257, 6) !== 'ustar') throw new Error('not an emend backup (not a ustar archive)');
      const prefix = field(h, 345, 155);
      const name = prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100);
      const mode = Number.parseInt(field(h, 100, 8), 8);
      const size = Number.parseInt(field(h, 124, 12).trim() || '0', 8);
      const type = field(h, 156, 1);
      if (type === '5') yield { path: name, mode };
      else if (type === '0' || type === '') current = { path: name, mode, size };
      else throw new Error(`unexpected entry type "${type}" for ${name}`);
    }
  }
  throw new Error('the backup ends early (truncated?)');
}
