import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config/config.js';
import { type EnvEntry, EnvironmentCache } from '../environments/env-cache.js';

const USAGE = 'usage: emend env list [--json]\n       emend env purge (--all | KEY | --repo URL)';

const EXIT_OK = 0;
const EXIT_NOT_FOUND = 1;
const EXIT_USAGE = 2;

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

function table(entries: EnvEntry[]): string {
  if (entries.length === 0) return 'no cached environments';
  const total = entries.reduce((sum, e) => sum + e.bytes, 0);
  return [
    ...entries.map((e) =>
      [e.key, mb(e.bytes).padStart(10), `used ${e.last_used}`, `account ${e.account}`, e.repository].join('  '),
    ),
    `${entries.length} environment${entries.length === 1 ? '' : 's'}, ${mb(total)}`,
  ].join('\n');
}

/**
 * `emend env`: the cached environments of this server's data dir (docs/environments.md,
 * "Cached environments"). `list` shows them, most recently used first; `purge` removes all,
 * one by key, or a repository's. Exit 0 done, 1 nothing matched a KEY or --repo, 2 usage.
 */
export async function envCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const [sub, ...rest] = args;
  let values: { json?: boolean; all?: boolean; repo?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: rest,
      allowPositionals: sub === 'purge',
      options: sub === 'purge' ? { all: { type: 'boolean' }, repo: { type: 'string' } } : { json: { type: 'boolean' } },
    }));
  } catch (err) {
    console.error(`emend: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (sub !== 'list' && sub !== 'purge') {
    console.error(
      `emend: ${sub === undefined ? 'env needs a command: list or purge' : `unknown env command "${sub}"`}\n\n${USAGE}`,
    );
    return EXIT_USAGE;
  }
  const config = loadConfig(env);
  const cache = new EnvironmentCache({
    dir: join(config.dataDir, 'environments'),
    maxBytes: config.validator.envCacheBytes,
  });
  if (sub === 'list') {
    const entries = await cache.list();
    console.log(
      values.json
        ? JSON.stringify(
            entries.map(({ dir: _dir, ...e }) => e),
            null,
            2,
          )
        : table(entries),
    );
    return EXIT_OK;
  }
  const chosen = [values.all === true, values.repo !== undefined, positionals.length > 0].filter(Boolean).length;
  if (chosen !== 1 || positionals.length > 1) {
    console.error(`emend: env purge takes one of --all, KEY or --repo URL\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  const key = positionals[0];
  const removed = await cache.purge((e) => values.all === true || e.key === key || e.repository === values.repo);
  // Builds a killed process left go too.
  await cache.sweep();
  if (removed.length === 0 && values.all !== true) {
    console.error(`emend: no cached environment ${key !== undefined ? `with key ${key}` : `for ${values.repo}`}`);
    return EXIT_NOT_FOUND;
  }
  console.log(`removed ${removed.length} environment${removed.length === 1 ? '' : 's'}`);
  return EXIT_OK;
}
