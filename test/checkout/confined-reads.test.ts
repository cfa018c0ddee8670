import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Modules that read or write a checkout's (or a site directory's) files must do it through
 * src/checkout/confined-fs.ts, which never follows a symlink out of the tree. This fails when
 * one of them takes a reading or writing function from node:fs directly.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const GUARDED = [
  'src/steps',
  'src/locator',
  'src/edits',
  'src/sites/publish.ts',
  'src/environments/detect.ts',
  'src/sites/site-dir.ts',
  'src/cli/locate.ts',
];

/** Functions that only make or remove a scratch directory the service itself owns. */
const HARMLESS = new Set(['mkdir', 'mkdtemp', 'rm']);

/** Files allowed more, and why. */
const ALLOWED: Record<string, string[]> = {
  // the locator's index cache lives under the data dir, not in a checkout
  'src/locator/cache.ts': ['mkdirSync', 'readFileSync', 'renameSync', 'writeFileSync'],
  // the agent's saved conversation lives in the task's own directory, outside the checkout
  'src/steps/fix/agent/agent-fixer.ts': ['readFile', 'writeFile'],
  // the operator's own prompt file and --repo argument of `emend locate`
  'src/cli/locate.ts': ['readFileSync', 'statSync'],
};

function filesUnder(path: string): string[] {
  const abs = join(ROOT, path);
  if (path.endsWith('.ts')) return [abs];
  return readdirSync(abs, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The names a source file takes from node:fs or node:fs/promises ('*' for a namespace or require). */
function fsImports(source: string): string[] {
  const names: string[] = [];
  for (const m of source.matchAll(/import\s*(type\s*)?\{([^}]*)\}\s*from\s*['"](?:node:)?fs(?:\/promises)?['"]/g)) {
    if (m[1]) continue;
    for (const part of m[2]!.split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)[0]!
        .trim();
      if (name && !part.trim().startsWith('type ')) names.push(name);
    }
  }
  if (/import\s+(\*\s+as\s+)?\w+\s+from\s*['"](?:node:)?fs(?:\/promises)?['"]/.test(source)) names.push('*');
  if (/(require|import)\(\s*['"](?:node:)?fs(?:\/promises)?['"]\s*\)/.test(source)) names.push('*');
  return names;
}

describe('host-side reads of repository files go through the confined file module', () => {
  it('recognises the ways a module can reach node:fs', () => {
    expect(fsImports("import { readFile, rm as remove } from 'node:fs/promises';")).toEqual(['readFile', 'rm']);
    expect(fsImports("import { type Stats, statSync } from 'node:fs';")).toEqual(['statSync']);
    expect(fsImports("import * as fs from 'fs';")).toEqual(['*']);
    expect(fsImports("import fs from 'node:fs';")).toEqual(['*']);
    expect(fsImports("const fs = await import('node:fs/promises');")).toEqual(['*']);
    expect(fsImports("import { ConfinedDir } from './confined-fs.js';")).toEqual([]);
  });

  it('no guarded module reads or writes files with node:fs itself', () => {
    const offences: string[] = [];
    const seen: string[] = [];
    for (const path of GUARDED.flatMap(filesUnder)) {
      const rel = relative(ROOT, path).split('\\').join('/');
      seen.push(rel);
      const allowed = new Set([...HARMLESS, ...(ALLOWED[rel] ?? [])]);
      for (const name of fsImports(readFileSync(path, 'utf8')))
        if (!allowed.has(name)) offences.push(`${rel}: ${name}`);
    }
    expect(seen).toEqual(
      expect.arrayContaining([
        'src/steps/fix/overview.ts',
        'src/locator/files.ts',
        'src/edits/apply.ts',
        'src/environments/detect.ts',
        'src/sites/site-dir.ts',
      ]),
    );
    expect(offences).toEqual([]);
  });
});
