import semver from 'semver';
import type { ConfinedDir } from '../checkout/confined-fs.js';
import { ciNodeVersions } from './ci-node.js';

/** What a Node repository asks of its toolchain, read from its files (never run). */
export interface NodeWants {
  /** The node versions it asks for, as a semver range ("18", ">=20.11", "18.20.8"). */
  node?: { range: string; from: string };
  /** pnpm or yarn at a version (packageManager, else a default major for the lockfile). */
  packageManager?: { name: 'pnpm' | 'yarn'; version: string; from: string };
  /** Its tests run in Chromium: the first browser test package of its dependencies. */
  browser?: { from: string };
  /** npm's lockfile format (package-lock.json, npm-shrinkwrap.json): 1 is npm 5 and 6's. */
  npmLockfileVersion?: number;
}

/**
 * Packages whose tests start Chromium (or a Chrome they look for): Karma's Chrome launchers,
 * Puppeteer, Playwright, WebdriverIO, and the runners built on them. A Karma with only a Firefox
 * launcher is not here: the sandbox has no Firefox to offer.
 */
export const BROWSER_TEST_PACKAGES = [
  'karma-chrome-launcher',
  'karma-puppeteer-launcher',
  'puppeteer',
  'puppeteer-core',
  'jest-puppeteer',
  'mocha-headless-chrome',
  'playwright',
  'playwright-chromium',
  '@playwright/test',
  'webdriverio',
  '@wdio/cli',
  '@web/test-runner-chrome',
  '@web/test-runner-puppeteer',
  '@web/test-runner-playwright',
  '@vitest/browser',
];

/** The first browser test package among the manifest's dev and runtime dependencies. */
export function browserPackage(pkg: { dependencies?: unknown; devDependencies?: unknown }): string | undefined {
  const has = (deps: unknown, name: string) => deps !== null && typeof deps === 'object' && Object.hasOwn(deps, name);
  return BROWSER_TEST_PACKAGES.find((name) => has(pkg.devDependencies, name) || has(pkg.dependencies, name));
}

const MAX_READ_BYTES = 64 * 1024;

/**
 * The node version, first found of: volta's pin, .nvmrc, .node-version (files someone wrote
 * to choose a version), engines.node (a range the package works with), then the versions the
 * repository's own CI tests on (src/environments/ci-node.ts), as one range (`14 || 12 || 10`):
 * the sandbox's node where it is one of them, else the newest of them. Aliases nvm understands
 * and semver does not ("lts/*", "node") are passed over.
 */
export function nodeWants(
  files: ConfinedDir,
  pkg: {
    engines?: unknown;
    volta?: unknown;
    packageManager?: unknown;
    dependencies?: unknown;
    devDependencies?: unknown;
  },
  pm: 'npm' | 'pnpm' | 'yarn',
): NodeWants {
  const readLine = (path: string) =>
    files
      .readText(path, { maxBytes: MAX_READ_BYTES })
      ?.split('\n')
      .map((l) => l.replace(/#.*$/, '').trim())
      .find((l) => l !== '');
  const field = (o: unknown, key: string) =>
    o !== null && typeof o === 'object' && typeof (o as Record<string, unknown>)[key] === 'string'
      ? ((o as Record<string, unknown>)[key] as string)
      : undefined;
  const engines = field(pkg.engines, 'node');
  const candidates: Array<[string | undefined, string]> = [
    [field(pkg.volta, 'node'), 'package.json volta.node'],
    [readLine('.nvmrc'), '.nvmrc'],
    [readLine('.node-version'), '.node-version'],
    ...(hasLockfile(files) ? ciWithin(files, engines === undefined ? undefined : nodeRange(engines)) : []),
    [engines, 'package.json engines.node'],
  ];
  const wants: NodeWants = {};
  for (const [raw, from] of candidates) {
    const range = raw === undefined ? undefined : nodeRange(raw);
    if (range !== undefined) {
      wants.node = { range, from };
      break;
    }
  }
  const declared = typeof pkg.packageManager === 'string' ? /^(pnpm|yarn)@([^+\s]+)/.exec(pkg.packageManager) : null;
  if (pm !== 'npm' && declared && declared[1] === pm && semver.valid(declared[2]!))
    wants.packageManager = { name: pm, version: declared[2]!, from: 'package.json packageManager' };
  else if (pm !== 'npm') wants.packageManager = { name: pm, ...defaultManager(files, pm) };
  const browser = browserPackage(pkg);
  if (browser) wants.browser = { from: browser };
  if (pm === 'npm') {
    const lockfile = npmLockfileVersion(files);
    if (lockfile !== undefined) wants.npmLockfileVersion = lockfile;
  }
  return wants;
}

/**
 * The versions the repository's CI tests on, as one range (`15.x || 14.x || 12.x`: each as CI's
 * setup-node reads it), those of them engines.node allows where it says: a range the package
 * works with is wider than the versions its tests were written against (an engines of
 * `>=12.0.0` is satisfied by a Node whose error messages the tests never saw).
 */
function ciWithin(files: ConfinedDir, engines: string | undefined): Array<[string | undefined, string]> {
  const ci = ciNodeVersions(files);
  if (!ci) return [];
  const ranges = ci.versions.map((v) => nodeRange(v)).filter((r): r is string => r !== undefined);
  const allowed = engines === undefined ? ranges : ranges.filter((r) => semver.intersects(r, engines));
  if (allowed.length === 0) return [];
  return [[allowed.join(' || '), engines === undefined ? ci.from : `${ci.from} (within package.json engines.node)`]];
}

/**
 * A lockfile pins the tree CI installed, which CI's Node ran. Without one the install resolves
 * today's packages (or, where the registry has the dates, those of the base commit's day,
 * `--before`, which a mirror whose publish dates are its own cannot give), and today's packages
 * are written for today's Node: CI's Node 12 of 2020 cannot parse a 2024 dependency's optional
 * chaining.
 */
function hasLockfile(files: ConfinedDir): boolean {
  return ['package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml'].some(
    (name) => files.info(name).kind === 'file',
  );
}

/** "v18" → "18", "18.20.8" → "18.20.8", ">=18 <21" as is; undefined when it is no range. */
export function nodeRange(raw: string): string | undefined {
  const text = raw.trim().replace(/^v(?=\d)/, '');
  if (text.length > 100) return undefined;
  return semver.validRange(text) !== null && /\d/.test(text) ? text : undefined;
}

/**
 * Without a packageManager field: pnpm's major from its lockfile's version (9.0 → pnpm 9,
 * 6.0 → pnpm 8, 5.x → pnpm 7), yarn 4 where a .yarnrc.yml says Yarn 2+, else Yarn classic.
 */
function defaultManager(files: ConfinedDir, pm: 'pnpm' | 'yarn'): { version: string; from: string } {
  if (pm === 'yarn')
    return files.info('.yarnrc.yml').kind === 'file'
      ? { version: '4', from: '.yarnrc.yml (Yarn 2+)' }
      : { version: '1', from: 'yarn.lock (Yarn classic)' };
  const lock = files.readText('pnpm-lock.yaml', { maxBytes: 4096 }) ?? '';
  const v = /^lockfileVersion:\s*'?(\d+)/m.exec(lock)?.[1];
  const major = v === undefined ? 9 : Number(v) >= 9 ? 9 : Number(v) === 6 ? 8 : Number(v) === 5 ? 7 : 9;
  return { version: String(major), from: `pnpm-lock.yaml (lockfileVersion ${v ?? 'unknown'})` };
}

/**
 * The lockfileVersion of package-lock.json or npm-shrinkwrap.json. npm writes it among the
 * first keys, so the head of the file is enough; a lockfile without the key is npm 5's, 1.
 */
function npmLockfileVersion(files: ConfinedDir): number | undefined {
  for (const name of ['npm-shrinkwrap.json', 'package-lock.json']) {
    if (files.info(name).kind !== 'file') continue;
    const read = files.read(name, { firstBytes: 4096 });
    const head = read.ok ? read.bytes.toString('utf8') : '';
    const v = /"lockfileVersion"\s*:\s*(\d+)/.exec(head)?.[1];
    return v === undefined ? 1 : Number(v);
  }
  return undefined;
}
