import semver from 'semver';

/** How many node versions are fetched and tried before the sandbox's own is kept. */
const MAX_TRIES = 3;

/**
 * The node versions to try for a range, best first: the newest that satisfies it, then, nearest
 * first, the newest of each other major (by distance from the range's lowest version; the newer
 * on a tie), so that a range the registry has no binary for (node 0.6, a major not yet out), or
 * whose binary does not run here, gets the nearest that does (docs/environments.md, "Toolchains").
 */
export function nodeCandidates(
  available: readonly string[],
  range: string,
): Array<{ version: string; satisfies: boolean }> {
  const best = semver.maxSatisfying([...available], range);
  const wanted = semver.minVersion(range);
  const newestOf = new Map<number, string>();
  for (const v of available) {
    const major = semver.major(v);
    const known = newestOf.get(major);
    if (known === undefined || semver.gt(v, known)) newestOf.set(major, v);
  }
  const near = [...newestOf.entries()]
    .filter(([major]) => best === null || major !== semver.major(best))
    .sort(([a], [b]) => {
      const target = wanted?.major ?? 0;
      return Math.abs(a - target) - Math.abs(b - target) || b - a;
    })
    .map(([, version]) => ({ version, satisfies: false }));
  return [...(best === null ? [] : [{ version: best, satisfies: true }]), ...near].slice(0, MAX_TRIES);
}
