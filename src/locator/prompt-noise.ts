/**
 * Lines of a bug report that say nothing about where the bug is but flood a bag-of-words query:
 * dependency listings (`pip list`, `pip freeze`, `conda list`, `npm ls`-like `name version` tables)
 * and `--version` output. A report that pastes 300 installed packages makes BM25 match every file
 * that mentions one of them, and a package whose name the repository also defines (`wcwidth`)
 * looks like a named symbol.
 */

/** `name  1.2.3`, `name==1.2.3`, `name 1.2.3  /path/to/location`: one package and its version. */
const PACKAGE_LINE = /^\s*[A-Za-z][\w.\-[\]]*(?:\s*(?:==|>=|<=|~=|@)\s*|\s+)v?\d+(?:\.\d+)+[\w.+-]*(?:\s+\S+)?\s*$/;
/** The header and rule of a `pip list` table. */
const LISTING_HEADER = /^\s*(?:Package\s+Version(?:\s+Location)?|[-=]{3,}(?:\s+[-=]{3,})+)\s*$/i;

/** The prompt without dependency-listing lines; every other line as it was, so line-based parsing still holds. */
export function withoutDependencyListings(prompt: string): string {
  return prompt
    .split('\n')
    .map((line) => (PACKAGE_LINE.test(line) || LISTING_HEADER.test(line) ? '' : line))
    .join('\n');
}
