import type { ConfinedDir } from '../checkout/confined-fs.js';

/*
 * The project's own name, as its manifest declares it: nearly every report writes it ("Marked version:",
 * "highlight.js is breaking…"), so a file named like it (`src/marked.js`, `src/highlight.js`) is not
 * what a report names when it says it. The top-level manifests only, read through the confined reader.
 */

/** `@scope/name`, `name.js`, `name-js` → `name`; lower case. */
function bare(name: string): string {
  return name
    .toLowerCase()
    .replace(/^@[^/]+\//, '')
    .replace(/[.-]js$/, '');
}

/** The names package.json and pyproject.toml declare at the repository's top; none is an empty list. */
export function projectNames(repo: Pick<ConfinedDir, 'readText'>): string[] {
  const names = new Set<string>();
  const pkg = repo.readText('package.json', { maxBytes: 1 << 20 });
  if (pkg) {
    try {
      const name = (JSON.parse(pkg) as { name?: unknown }).name;
      if (typeof name === 'string' && name.trim()) names.add(bare(name.trim()));
    } catch {
      // not JSON: no name from it
    }
  }
  const toml = repo.readText('pyproject.toml', { maxBytes: 1 << 20 });
  const section = toml ? /^\[(?:project|tool\.poetry)\]\s*$([\s\S]*?)(?=^\[|(?![\s\S]))/m.exec(toml) : null;
  const declared = section ? /^name\s*=\s*["']([^"']+)["']/m.exec(section[1]!) : null;
  if (declared) names.add(bare(declared[1]!));
  return [...names].filter((n) => /^[a-z0-9_]+$/.test(n));
}
