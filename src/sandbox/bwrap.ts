import { execFileSync } from 'node:child_process';
import { accessSync, constants, existsSync, lstatSync, readlinkSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { ETC_ENTRIES, ETC_NETWORK_ENTRIES, type HostLayout, type RootEntry } from './bwrap-args.js';
import { SYSTEM_CA_BUNDLE } from './egress-env.js';

const ROOT_DIRS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** The host facts the bwrap argv depends on. */
export function hostLayout(): HostLayout {
  const rootEntries: RootEntry[] = [];
  for (const path of ROOT_DIRS) {
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(path);
    } catch {
      continue;
    }
    if (stat.isSymbolicLink()) {
      const target = readlinkSync(path);
      // Only links into /usr (merged /usr); anything else would point at a path we do not bind.
      if (/^\/?usr\//.test(target)) rootEntries.push({ path, symlinkTo: target });
    } else if (stat.isDirectory()) {
      rootEntries.push({ path, directory: true });
    }
  }
  return {
    rootEntries,
    etc: ETC_ENTRIES.filter((p) => existsSync(p)),
    etcNetwork: ETC_NETWORK_ENTRIES.filter((p) => existsSync(p)),
    sysrqTrigger: existsSync('/proc/sysrq-trigger'),
    ...(existsSync(SYSTEM_CA_BUNDLE) ? { caBundle: SYSTEM_CA_BUNDLE } : {}),
  };
}

export function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** A program on PATH or in the usual system directories. */
export function findExecutable(name: string, path = process.env.PATH ?? ''): string | undefined {
  const dirs = [...path.split(delimiter).filter(Boolean), '/usr/bin', '/usr/sbin', '/bin', '/sbin'];
  for (const dir of dirs) {
    const candidate = join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** "0.8.0" from `bwrap --version`, or undefined when it does not answer. */
export function bwrapVersion(bwrap: string): string | undefined {
  try {
    const out = execFileSync(bwrap, ['--version'], {
      encoding: 'utf8',
      timeout: 5_000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    return /(\d+\.\d+(?:\.\d+)?)/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}
