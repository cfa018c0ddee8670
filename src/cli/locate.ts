import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { locate } from '../locator/index.js';

const USAGE = 'usage: emend locate --repo DIR --prompt-file F [--top N] [--json]';
const EXIT_USAGE = 2;

/**
 * Where the CLI caches locator indexes: EMEND_LOCATOR_CACHE_DIR, else $XDG_CACHE_HOME/emend/locator (~/.cache by
 * default).
 */
export function locatorCacheDir(env: NodeJS.ProcessEnv): string {
  return env.EMEND_LOCATOR_CACHE_DIR || join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'emend', 'locator');
}

/** `emend locate`: the deterministic locator on a local checkout; ranks files for the prompt, no model call. */
export async function locateCommand(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: { repo?: string; 'prompt-file'?: string; top?: string; json?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        repo: { type: 'string' },
        'prompt-file': { type: 'string' },
        top: { type: 'string' },
        json: { type: 'boolean' },
      },
    }));
  } catch (err) {
    console.error(`emend: ${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (!values.repo || !values['prompt-file']) {
    console.error(`emend: locate needs --repo and --prompt-file\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  if (values.top !== undefined && !/^[1-9]\d*$/.test(values.top)) {
    console.error(`emend: --top expects a positive integer, got "${values.top}"\n\n${USAGE}`);
    return EXIT_USAGE;
  }
  let prompt: string;
  try {
    prompt = readFileSync(values['prompt-file'], 'utf8');
  } catch (err) {
    console.error(`emend: cannot read the prompt file: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  const repo = resolve(values.repo);
  if (!statSync(repo, { throwIfNoEntry: false })?.isDirectory()) {
    console.error(`emend: --repo ${values.repo} is not a directory`);
    return 1;
  }
  const out = await locate(repo, prompt, { top: values.top ? Number(values.top) : 10, cacheDir: locatorCacheDir(env) });
  if (values.json) {
    console.log(JSON.stringify({ files: out.files }, null, 2));
    return 0;
  }
  if (out.files.length === 0) console.log('no file matches the prompt');
  out.files.forEach((f, i) => {
    console.log(`${String(i + 1).padStart(3)}. ${f.path}  ${f.score.toFixed(3)}`);
    for (const r of f.reasons) console.log(`       - ${r}`);
  });
  console.error(
    `(${out.timings.files} files, ` +
      `index ${out.timings.cache === 'hit' ? 'from cache' : 'built'}, ${out.timings.total_ms} ms)`,
  );
  return 0;
}
