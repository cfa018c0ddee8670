import { rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { openPglite, openPostgres, runMigrations } from '../../src/db/client.js';
import { createTaskQueue } from '../../src/queue/task-queue.js';
import { buildEmendBundle } from './emend-bundle.js';
import { findPostgresBin, startCluster } from './postgres-cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    dbKind: 'pglite' | 'postgres';
    /** pglite: a tarball of a migrated data dir that each test loads into memory. */
    pgliteTemplate: string;
    /** postgres: URL of the cluster's maintenance database, and the migrated template database. */
    pgAdminUrl: string;
    pgTemplate: string;
    /** The directory of this run's bundle of the programs tests start as processes (emend-bundle.ts). */
    emendBundle: string;
  }
}

const TEMPLATE_DB = 'emend_template';

// Both projects' setups run in the one vitest process: the bundle is built once for the run.
// It is removed when the last project's teardown has run.
let bundle: Promise<string> | undefined;
let users = 0;
async function releaseBundle() {
  users -= 1;
  if (users === 0 && bundle) rmSync(await bundle, { recursive: true, force: true });
}

/** Migrates once per run; each test then copies the migrated database, which takes milliseconds. */
export default async function setup(project: TestProject) {
  const kind = project.name === 'postgres' ? 'postgres' : 'pglite';
  project.provide('dbKind', kind);
  bundle ??= buildEmendBundle();
  users += 1;
  project.provide('emendBundle', await bundle);
  if (kind === 'pglite') {
    const database = await openPglite(undefined);
    await runMigrations(database);
    // pg-boss installs its schema once here, so each test's copy starts with it.
    await (await createTaskQueue(database)).stop();
    const blob = await database.pglite!.dumpDataDir('none');
    await database.close();
    const path = join(tmpdir(), `emend-pglite-template-${process.pid}.tar`);
    writeFileSync(path, Buffer.from(await blob.arrayBuffer()));
    project.provide('pgliteTemplate', path);
    project.provide('pgAdminUrl', '');
    project.provide('pgTemplate', '');
    // 42 MB a run: left behind, every run on the machine kept one (453 in /tmp here, 19 GB).
    return async () => {
      rmSync(path, { force: true });
      await releaseBundle();
    };
  }
  const cluster = await startCluster(findPostgresBin()!);
  const admin = new pg.Client({ connectionString: cluster.url('postgres') });
  await admin.connect();
  await admin.query(`create database ${TEMPLATE_DB}`);
  await admin.end();
  const template = openPostgres(cluster.url(TEMPLATE_DB));
  await runMigrations(template);
  await (await createTaskQueue(template)).stop();
  await template.close();
  project.provide('pgliteTemplate', '');
  project.provide('pgAdminUrl', cluster.url('postgres'));
  project.provide('pgTemplate', TEMPLATE_DB);
  return async () => {
    await cluster.stop();
    await releaseBundle();
  };
}
