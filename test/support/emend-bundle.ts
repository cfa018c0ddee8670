import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Plugin } from 'esbuild';

const repoRoot = resolve(import.meta.dirname, '../..');

/**
 * The programs tests start as processes of their own: the CLI and the helpers that stand in
 * for a second worker or a second process on the machine.
 */
export const BUNDLED_ENTRIES = [
  'src/bin.ts',
  'test/support/worker-process.ts',
  'test/support/unawaited-rejection.ts',
  'test/checkout/checkout-process.ts',
] as const;

/** Where a run keeps its bundle: inside the repository, so that packages resolve from its node_modules. */
const BUNDLES = join(repoRoot, 'node_modules/.cache/emend-test-bundle');

/**
 * Each module keeps the location it has in the source tree: `import.meta.url` and
 * `import.meta.dirname` are replaced by the source file's own, so that paths the code finds
 * relative to itself (the migrations, the built panel, the tree-sitter grammars) are the same
 * as under tsx.
 */
const keepSourceLocation: Plugin = {
  name: 'keep-source-location',
  setup(b) {
    b.onLoad({ filter: /\.[cm]?tsx?$/ }, (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const source = readFileSync(args.path, 'utf8')
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(dirname(args.path)));
      return { contents: source, loader: args.path.endsWith('x') ? 'tsx' : 'ts' };
    });
  },
};

/** Packages stay imports (node resolves them at run time), except the client, which is built from its source. */
const packagesExternal: Plugin = {
  name: 'packages-external',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) =>
      args.path === '@emend/client' || args.path.startsWith('@emend/client/') ? undefined : { external: true },
    );
  },
};

/**
 * Builds the entries into one ES-module bundle for this test run, from the source as it is
 * now. A process started from it begins in about half the CPU time of one started through
 * tsx, which transforms and resolves each of several hundred modules again in every process:
 * the suite starts hundreds of them, and on a 2-core machine that CPU was its wall time.
 * Returns the directory; `<dir>/<entry's path with .js>` is each entry.
 */
export async function buildEmendBundle(): Promise<string> {
  removeStaleBundles();
  const outdir = join(BUNDLES, String(process.pid));
  rmSync(outdir, { recursive: true, force: true });
  await build({
    entryPoints: BUNDLED_ENTRIES.map((e) => join(repoRoot, e)),
    outbase: repoRoot,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['emend-source'],
    plugins: [packagesExternal, keepSourceLocation],
    logLevel: 'warning',
  });
  return outdir;
}

/** A bundle left by a run that was killed: its process is gone. */
function removeStaleBundles(): void {
  if (!existsSync(BUNDLES)) {
    mkdirSync(BUNDLES, { recursive: true });
    return;
  }
  for (const name of readdirSync(BUNDLES)) {
    const pid = Number(name);
    if (Number.isInteger(pid) && pid !== process.pid && !alive(pid)) {
      rmSync(join(BUNDLES, name), { recursive: true, force: true });
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The bundled file of an entry, given the bundle's directory. */
export function bundledEntry(dir: string, entry: string): string {
  return join(dir, entry.replace(/\.[cm]?tsx?$/, '.js'));
}
