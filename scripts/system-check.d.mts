// Types of scripts/system-check.mjs, which is plain JavaScript so that it runs before anything is built.

export type Purpose = 'start' | 'test';

export interface SystemPackage {
  /** The Debian package. */
  name: string;
  /** Which README command needs it. */
  for: Purpose[];
  /** Commands that must be on PATH. */
  commands?: string[];
  /** Absolute paths that must exist. */
  files?: string[];
  /** A PostgreSQL server bin dir (initdb, pg_ctl) under /usr/lib/postgresql. */
  postgres?: boolean;
  /** A module /usr/bin/python3 must import. */
  python?: string;
  /** Not needed when this environment variable is set (the operator points elsewhere). */
  unlessEnv?: string;
}

export type Plan =
  | { action: 'none' }
  | { action: 'install'; packages: string[]; line: string }
  | { action: 'stop'; packages: string[]; command: string; message: string };

export const PACKAGES: ReadonlyArray<SystemPackage>;
export function plan(facts: { purpose: Purpose; missing: string[]; isRoot: boolean; hasAptGet: boolean }): Plan;
export function probe(
  root: string,
  env: NodeJS.ProcessEnv,
): { installed: (p: SystemPackage) => boolean; aptGet: string | undefined };
export function missingFor(
  purpose: Purpose,
  installed: (p: SystemPackage) => boolean,
  env: NodeJS.ProcessEnv,
): string[];
export function main(purpose: Purpose, env?: NodeJS.ProcessEnv): number;
