import type { ConfinedDir } from '../checkout/confined-fs.js';

/**
 * The Node versions a repository's own CI tests on, read from its files (never run): Travis's
 * `node_js` and GitHub Actions' `node-version` (or a matrix key named node, node-version or
 * node_version, which such a step names through `${{ matrix… }}`). The versions as written
 * (`'14'`, `16.x`, `18.20`); aliases (`lts/*`, `node`, `stable`) and expressions are left out. A
 * small line reader rather than a YAML parser: the keys are at known places, and what is not
 * understood is passed over, never guessed.
 */
export function ciNodeVersions(files: ConfinedDir): { versions: string[]; from: string } | undefined {
  const MAX = 64 * 1024;
  const travis = files.readText('.travis.yml', { maxBytes: MAX });
  const fromTravis = travis === undefined ? [] : listed(travis, /^node_js$/);
  if (fromTravis.length > 0) return { versions: fromTravis, from: '.travis.yml node_js' };
  const workflows = files
    .list('.github/workflows')
    .filter((e) => e.type === 'file' && /\.ya?ml$/.test(e.name))
    .map((e) => e.name)
    .sort();
  for (const name of workflows) {
    const text = files.readText(`.github/workflows/${name}`, { maxBytes: MAX });
    const versions = text === undefined ? [] : listed(text, /^(node-version|node_version|node)$/);
    if (versions.length > 0) return { versions, from: `.github/workflows/${name} node-version` };
  }
  return undefined;
}

/** A literal version: digits with dots, an `x` or `*` allowed after the first dot. */
const VERSION = /^v?\d+(\.(\d+|x|\*)){0,2}$/;

/** The literal versions under the keys `key` matches: `key: 14`, `key: [12, 14]`, or a `- 14` list under it. */
function listed(text: string, key: RegExp): string[] {
  const out: string[] = [];
  const lines = text.split('\n');
  const clean = (v: string) =>
    v
      .trim()
      .replace(/^['"]|['"]$/g, '')
      .trim();
  const take = (v: string) => {
    const value = clean(v);
    if (VERSION.test(value) && !out.includes(value)) out.push(value);
  };
  for (let i = 0; i < lines.length; i++) {
    const m = /^(\s*)(?:-\s+)?([\w-]+):\s*(.*?)\s*(?:#.*)?$/.exec(lines[i]!);
    if (!m || !key.test(m[2]!)) continue;
    const value = m[3]!;
    if (value.startsWith('[')) for (const v of value.replace(/^\[|\]$/g, '').split(',')) take(v);
    else if (value !== '') take(value);
    else {
      // A block list: the `- item` lines indented under the key.
      const indent = m[1]!.length;
      for (let j = i + 1; j < lines.length; j++) {
        const item = /^(\s*)-\s+(.*?)\s*(?:#.*)?$/.exec(lines[j]!);
        if (lines[j]!.trim() === '') continue;
        if (!item || item[1]!.length < indent) break;
        take(item[2]!);
      }
    }
  }
  return out;
}
