import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyEdits, parseEdits } from '../../src/edits/index.js';
import { WORKED_EXAMPLE, workedExampleText } from '../../src/edits/worked-example.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Every file under `root`, by repository-relative path. */
function filesUnder(root: string, at = root): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(at, { withFileTypes: true })) {
    const path = join(at, entry.name);
    if (entry.isDirectory()) Object.assign(out, filesUnder(root, path));
    else out[relative(root, path)] = readFileSync(path, 'utf8');
  }
  return out;
}

describe('the worked example of the edit format', () => {
  it('parses with the real parser and, applied to its files, gives exactly the files it claims', async () => {
    dir = mkdtempSync(join(tmpdir(), 'emend-example-'));
    for (const [path, text] of Object.entries(WORKED_EXAMPLE.before)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    }
    const parsed = parseEdits(WORKED_EXAMPLE.answer);
    expect(parsed.errors).toEqual([]);
    expect(parsed.edits.map((e) => `${e.kind} ${e.path}`)).toEqual([
      'replace messages/en.txt',
      'replace messages/en.txt',
      'replace messages/de.txt',
    ]);
    // the analysis comes back as commentary, before any block
    expect(parsed.notes).toMatch(/^The misspelt greeting is the `greeting` line of messages\/en\.txt\./);
    const report = await applyEdits(dir, parsed.edits);
    expect(report.failed).toEqual([]);
    expect(report.already).toEqual([]);
    expect(report.applied).toEqual([
      { path: 'messages/en.txt', kind: 'modified', match: 'exact' },
      { path: 'messages/en.txt', kind: 'modified', match: 'exact' },
      { path: 'messages/de.txt', kind: 'created', match: 'new' },
    ]);
    expect(filesUnder(dir)).toEqual(WORKED_EXAMPLE.after);
  });

  it('docs/edit-format.md shows the same exchange, verbatim', () => {
    const doc = readFileSync(join(import.meta.dirname, '../../docs/edit-format.md'), 'utf8');
    expect(doc).toContain(workedExampleText());
  });
});
