import { existsSync } from 'node:fs';
import type { SandboxReport } from '../../src/sandbox/types.js';
import { findPostgresBin } from './postgres-cluster.js';

/**
 * What the test suite needs from the host, decided in one place. A test that cannot run
 * without something asks here instead of testing for it itself: under CI (`CI` set, as
 * .ci/run does) a missing requirement fails the run, because CI installs everything and a
 * skip there would be a green run that did not test; elsewhere (a developer's `npx vitest`)
 * the test is skipped with a note saying what to install, and the closing summary lists it.
 *
 * No import of vitest here: vitest.config.ts uses it too.
 */
export interface Requirement {
  /** What is needed, for the message. */
  what: string;
  /** Why it is not there; undefined when it is. */
  missing?: string;
  /** How to get it. */
  install: string;
}

export const CHROMIUM = '/usr/bin/chromium';
export const KUBECTL = '/usr/bin/kubectl';

export const requirements = {
  postgres(): Requirement {
    return {
      what: 'PostgreSQL server binaries (the postgres test leg)',
      missing: findPostgresBin() === undefined ? 'no initdb and pg_ctl under /usr/lib/postgresql/*/bin' : undefined,
      install: 'apt-get install -y postgresql',
    };
  },
  kubectl(): Requirement {
    return {
      what: 'kubectl (kubectl kustomize renders the Kubernetes manifests)',
      missing: existsSync(KUBECTL) ? undefined : `${KUBECTL} does not exist`,
      install: 'apt-get install -y kubernetes-client',
    };
  },
  chromium(): Requirement {
    return {
      what: `Debian's Chromium at ${CHROMIUM}`,
      missing: existsSync(CHROMIUM) ? undefined : `${CHROMIUM} does not exist`,
      install: 'apt-get install -y chromium fonts-dejavu-core',
    };
  },
  /**
   * The sandbox's memory or process limit, which needs cgroups the service can make. Where
   * it cannot, the documented fallback (docs/sandbox.md) is to run without that limit and
   * say so; that fallback is tested on its own (sandbox tests with cgroups turned off), but
   * CI must also prove the limit itself holds.
   */
  sandboxLimit(report: SandboxReport, limit: 'memory' | 'processes'): Requirement {
    const inForce = limit === 'memory' ? report.memoryLimit : report.processLimit;
    return {
      what: `the sandbox's ${limit} limit (cgroups)`,
      missing: inForce
        ? undefined
        : `the sandbox cannot make cgroups ` +
          `here: ${(report.notes ?? []).join('; ') || report.problem || 'no reason given'}`,
      install:
        'run as root with a writable /sys/fs/cgroup (memory and pids controllers), or delegate a cgroup v2 ' +
        'subtree with them',
    };
  },
};

/** True when this run is CI: `CI` set to anything but empty, 0 or false (as CI services and .ci/run set it). */
export function isCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.CI?.trim().toLowerCase();
  return value !== undefined && value !== '' && value !== '0' && value !== 'false';
}

export class MissingRequirementError extends Error {
  override name = 'MissingRequirementError';
}

function message(req: Requirement) {
  return `${req.what} is missing: ${req.missing} (${req.install})`;
}

/**
 * For a whole file or test project: true when the requirement is met. Under CI a missing
 * one throws (the file, or the run, fails); elsewhere it prints a notice and returns false
 * for the caller to skip.
 */
export function available(req: Requirement, env: NodeJS.ProcessEnv = process.env): boolean {
  if (req.missing === undefined) return true;
  if (isCI(env))
    throw new MissingRequirementError(
      `CI: ${message(req)}; CI installs it, so this is a broken CI machine, not a test to skip`,
    );
  console.warn(`NOTICE: ${message(req)}; the tests that need it are skipped`);
  return false;
}

/**
 * Inside a test: returns when the requirement is met. Under CI a missing one fails the
 * test; elsewhere the test is skipped with a note the closing summary prints.
 */
export function need(
  ctx: { skip: (note?: string) => never },
  req: Requirement,
  env: NodeJS.ProcessEnv = process.env,
): void {
  if (req.missing === undefined) return;
  if (isCI(env))
    throw new MissingRequirementError(
      `CI: ${message(req)}; CI installs it, so this is a broken CI machine, not a test to skip`,
    );
  ctx.skip(message(req));
}
