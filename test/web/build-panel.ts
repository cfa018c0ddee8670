import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const ROOT = resolve(import.meta.dirname, '../..');
const WEB = join(ROOT, 'web');
export const PANEL_OUT = join(ROOT, 'dist/web');
/** The hash of the sources the panel in dist/web was built from (beside it: vite empties dist/web). */
const STAMP = join(ROOT, 'dist/.web-build-hash');
const LOCK = join(ROOT, 'dist/.web-build.lock');

function sourcesHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      if (name === 'node_modules') continue;
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else hash.update(path.slice(ROOT.length)).update(readFileSync(path));
    }
  };
  walk(WEB);
  return hash.digest('hex');
}

const fresh = (hash: string) =>
  existsSync(join(PANEL_OUT, 'index.html')) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === hash;

/**
 * Builds the panel with Vite when dist/web is missing or older than web/ (CI runs the tests on a
 * clean checkout, without npm run build). A lock directory keeps parallel test files (and the
 * two database legs) from building at once; a build takes a few seconds.
 */
export async function ensurePanelBuilt(): Promise<void> {
  const hash = sourcesHash();
  if (fresh(hash)) return;
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch {
      // a lock left by a killed run is stale after two minutes
      if (existsSync(LOCK) && Date.now() - statSync(LOCK).mtimeMs > 120_000)
        rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error('timed out waiting for another test to build the control panel');
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  try {
    if (fresh(hash)) return;
    const { build } = await import('vite');
    await build({ configFile: join(WEB, 'vite.config.ts'), logLevel: 'warn' });
    writeFileSync(STAMP, hash);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** The JavaScript a first load of /app/ fetches (the entry script and its preloads), gzip-compressed, in bytes. */
export function firstLoadJsGzip(): { files: string[]; bytes: number } {
  const html = readFileSync(join(PANEL_OUT, 'index.html'), 'utf8');
  const files = [...html.matchAll(/(?:src|href)="\/app\/(assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
  const bytes = files.reduce((sum, f) => sum + gzipSync(readFileSync(join(PANEL_OUT, f)), { level: 9 }).length, 0);
  return { files, bytes };
}
