import semver from 'semver';

/** The npm an install runs with when the sandbox's will not do, and why. */
export interface NpmChoice {
  /** A major: the newest version of it is fetched. */
  range: string;
  why: string;
}

/**
 * The node versions each npm major runs on (its engines.node), for the majors a sandbox has:
 * npm 10 and 11 stop at start-up on an older node ("npm does not support Node.js").
 */
const NPM_RUNS_ON: Record<number, string> = { 10: '^18.17.0 || >=20.5.0', 11: '^20.17.0 || >=22.9.0' };

/**
 * The npm for a repository's node and lockfile (docs/environments.md, "Toolchains"), or
 * undefined for the sandbox's own:
 * - node 4 and 5: npm 5, the last that runs there, and the first with package-lock.json and
 *   (5.7) `npm ci` (node 4 shipped npm 2, which has neither);
 * - a lockfileVersion 1 lockfile (npm 5 and 6 wrote it): npm 6, which installs it as written,
 *   where npm 7 and later convert it and can refuse an old package's version string
 *   ("Invalid Version" for `3001.0001.0000-dev-harmony-fb`);
 * - a node the sandbox's npm does not run on (or no npm in the sandbox): the npm of that node's
 *   era, 6 before node 16 (what node 8 to 14 shipped), 8 from 16 (npm 8 runs on 16 and 18).
 */
export function npmFor(
  node: string,
  sandboxNpm: string | undefined,
  lockfileVersion: number | undefined,
): NpmChoice | undefined {
  const major = semver.major(node);
  if (major < 6) return { range: '5', why: `npm 6 and later do not run on node ${node}` };
  if (lockfileVersion === 1)
    return {
      range: '6',
      why: 'a lockfileVersion 1 package-lock.json (npm 5 and 6), which npm 7 and later convert and can refuse',
    };
  const runsOn = sandboxNpm && semver.valid(sandboxNpm) ? NPM_RUNS_ON[semver.major(sandboxNpm)] : undefined;
  if (sandboxNpm !== undefined && (runsOn === undefined || semver.satisfies(node, runsOn))) return undefined;
  const why = sandboxNpm ? `the sandbox's npm ${sandboxNpm} does not run on node ${node}` : 'the sandbox has no npm';
  if (major < 16) return { range: '6', why };
  if (!semver.satisfies(node, NPM_RUNS_ON[10]!)) return { range: '8', why };
  return { range: '10', why };
}
