import { ConfinedDir } from '../checkout/confined-fs.js';
import type { SetupReport } from '../step-contract/fix.js';

/**
 * What a failed setup could not reach, for its verdict (docs/environments.md, "What setup
 * reached"): the proxy's refusals by host, port and reason, and, where a dependency is fetched
 * from a code host that setup could not reach, which dependency asked for it. The tool's last
 * lines say that something failed; these say where it tried to go.
 */

type Connection = NonNullable<SetupReport['connections']>[number];

/** At most this many refusals are named; the rest are counted. */
const SHOWN = 5;

/** `refused: 127.0.0.1:9 (why), …`, or undefined when the proxy refused nothing. */
export function refusedSummary(connections: readonly Connection[] | undefined): string | undefined {
  const refused = (connections ?? []).filter((c) => !c.allowed);
  if (refused.length === 0) return undefined;
  const named = refused.slice(0, SHOWN).map((c) => `${c.host}:${c.port} (${c.reason ?? 'refused'})`);
  const more = refused.length > SHOWN ? `, and ${refused.length - SHOWN} more` : '';
  return `refused: ${named.join(', ')}${more}`;
}

/** The code hosts a dependency may be named by, and the spellings that name each. */
const CODE_HOSTS: { host: string; fetchedFrom: string[]; spelled: RegExp }[] = [
  {
    host: 'github.com',
    fetchedFrom: ['github.com', 'codeload.github.com', 'objects.githubusercontent.com'],
    // github:o/r, git+ssh://git@github.com/…, git@github.com:…, https://github.com/…, and npm's bare o/r
    spelled:
      /^(github:|(git\+)?(ssh|https?|git):\/\/([^@/]+@)?github\.com[/:]|git@github\.com:|[\w.-]+\/[\w.-]+(#.*)?$)/,
  },
  {
    host: 'gitlab.com',
    fetchedFrom: ['gitlab.com'],
    spelled: /^(gitlab:|(git\+)?(ssh|https?|git):\/\/([^@/]+@)?gitlab\.com[/:]|git@gitlab\.com:)/,
  },
  {
    host: 'bitbucket.org',
    fetchedFrom: ['bitbucket.org'],
    spelled: /^(bitbucket:|(git\+)?(ssh|https?|git):\/\/([^@/]+@)?bitbucket\.org[/:]|git@bitbucket\.org:)/,
  },
];

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies', 'peerDependencies'];

/**
 * For each code host that setup was refused (or reached nothing from), the dependencies of the
 * checkout's package.json written for it: `dependency foo (github:o/r) needs github.com, which
 * setup could not reach (…)`. package.json is read through the confined file module.
 */
export function codeHostNeeds(repoDir: string, connections: readonly Connection[] | undefined): string[] {
  const unreached = new Map<string, string>();
  for (const c of connections ?? []) {
    const code = CODE_HOSTS.find((h) => h.fetchedFrom.includes(c.host));
    if (!code || unreached.has(code.host)) continue;
    if (!c.allowed) unreached.set(code.host, `refused: ${c.reason ?? 'refused'}`);
    else if (c.bytes_in === 0) unreached.set(code.host, 'unreachable');
  }
  if (unreached.size === 0) return [];
  const manifest = readManifest(repoDir);
  const notes: string[] = [];
  for (const [host, why] of unreached) {
    const code = CODE_HOSTS.find((h) => h.host === host)!;
    const deps = Object.entries(manifest).filter(([, spec]) => code.spelled.test(spec));
    const named = deps.slice(0, SHOWN).map(([name, spec]) => `${name} (${spec})`);
    notes.push(
      named.length > 0
        ? `${named.length === 1 ? 'dependency' : 'dependencies'} ${named.join(', ')} ${named.length === 1 ? 'needs' : 'need'} ${host}, which setup could not reach (${why})`
        : `a dependency needs ${host}, which setup could not reach (${why})`,
    );
  }
  return notes;
}

/** Every dependency of package.json with its spec (the last field's where a name is in several). */
function readManifest(repoDir: string): Record<string, string> {
  let text: string | undefined;
  try {
    text = new ConfinedDir(repoDir, { exclude: ['.git'] }).readText('package.json', { maxBytes: 1024 * 1024 });
  } catch {
    return {};
  }
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return {};
  }
  const out: Record<string, string> = {};
  if (typeof parsed !== 'object' || parsed === null) return out;
  for (const field of DEPENDENCY_FIELDS) {
    const deps = (parsed as Record<string, unknown>)[field];
    if (typeof deps !== 'object' || deps === null) continue;
    for (const [name, spec] of Object.entries(deps)) if (typeof spec === 'string') out[name] = spec;
  }
  return out;
}
