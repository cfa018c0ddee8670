/**
 * What a test process pays to open its databases, with V8's default WebAssembly tiers and with
 * `--liftoff-only` (test/support/node-flags.ts): it prints figures and asserts nothing.
 *
 * A test process lives for one file: it compiles PGlite's WebAssembly once (the module is kept per
 * process), loads the migrated template and opens a database a few times. By default V8 then
 * compiles the whole module again, optimised, on background threads, which such a short process
 * barely uses. Each run here is a fresh Node process that opens the template BENCH_OPENS times (3)
 * and reports its whole CPU (all threads); BENCH_RUNS (5) runs per setting, interleaved.
 *
 *   npx tsx bench/pglite-open.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { openPglite, runMigrations } from '../src/db/client.js';
import { envInt, loadAverage, log, median } from './stats.js';

const OPENS = envInt('BENCH_OPENS', 3);
const RUNS = envInt('BENCH_RUNS', 5);

async function child(template: string) {
  const c0 = process.cpuUsage();
  const blob = new Blob([readFileSync(template)]);
  for (let i = 0; i < OPENS; i++) {
    const db = await openPglite(undefined, { loadDataDir: blob, settings: { shared_buffers: '16MB' } });
    await db.pglite!.query('select count(*) from tasks');
    await db.close();
  }
  const c = process.cpuUsage(c0);
  process.stdout.write(String((c.user + c.system) / 1000));
}

async function main() {
  log(
    `machine: ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
      `Node ${process.version}, ${os.platform()} ${os.release()}; load ${loadAverage()}`,
  );
  const dir = mkdtempSync(join(os.tmpdir(), 'emend-bench-pglite-'));
  try {
    const first = await openPglite(undefined);
    await runMigrations(first);
    const template = join(dir, 'template.tar');
    writeFileSync(template, Buffer.from(await (await first.pglite!.dumpDataDir('none')).arrayBuffer()));
    await first.close();
    const settings = { default: [] as string[], '--liftoff-only': ['--liftoff-only'] };
    const cpu: Record<string, number[]> = { default: [], '--liftoff-only': [] };
    for (let r = 0; r < RUNS; r++)
      for (const [name, flags] of Object.entries(settings)) {
        const out = execFileSync(
          process.execPath,
          [...flags, '--import', 'tsx', import.meta.filename, '--child', template],
          {
            encoding: 'utf8',
          },
        );
        cpu[name]!.push(Number(out.trim().split('\n').pop()));
      }
    for (const [name, runs] of Object.entries(cpu))
      log(
        `${name.padEnd(16)} ${OPENS} opens in a fresh process: median ${median(runs).toFixed(0)} ms of CPU (${runs.map((c) => c.toFixed(0)).join(', ')})`,
      );
    log(`load after: ${loadAverage()}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') await child(process.argv[3]!);
else await main();
