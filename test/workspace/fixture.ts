import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { WorkspaceDeps } from '../../src/workspace/context.js';
import { createLogger } from '../../src/logger.js';

/** A data dir and a logger whose lines the test can read (debug level, so nothing is hidden). */
export function workspaceFixture() {
  const dataDir = mkdtempSync(join(tmpdir(), 'emend-ws-'));
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const deps: WorkspaceDeps = { dataDir, log: createLogger('debug', sink) };
  return { dataDir, deps, logLines, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** Every regular file under `dir` (symlinks not followed), dot-directories such as .git included. */
export function allFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...allFiles(path));
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** Files under `dir` whose bytes contain any of `needles`. */
export function filesContaining(dir: string, needles: string[]): string[] {
  return allFiles(dir).filter((file) => {
    const bytes = readFileSync(file);
    return needles.some((n) => bytes.includes(n));
  });
}
