/**
 * What starting a child process costs a process that holds an embedded database (not a test:
 * it prints figures and asserts nothing about time).
 *
 * Node starts every child (git, bubblewrap, the sandbox's commands) with fork() and exec()
 * (libuv on Linux), and fork copies the parent's page tables: the larger the parent's resident
 * memory, the dearer each child. An embedded PGlite holds hundreds of megabytes, so the service
 * on its embedded database, and every test process with a harness, pays for it on each git
 * command. Measured here: the parent's CPU (user + system) and the wall time per `/bin/true`
 * started and waited for, BENCH_SPAWNS times (100 by default), bare and then with one, two and
 * three migrated PGlite databases open as the tests open them (16 MB of shared buffers); then the
 * same children started by a small launcher process (a bare Node process with no database, asked
 * over IPC), the design the figures argue for: its cost does not grow with the parent's memory.
 *
 *   npx tsx bench/spawn-cost.ts
 */
import { execFileSync, fork } from 'node:child_process';
import os from 'node:os';
import { type Database, openPglite, runMigrations } from '../src/db/client.js';
import { envInt, loadAverage, log, median } from './stats.js';

const SPAWNS = envInt('BENCH_SPAWNS', 100);

/** A bare Node process that starts `/bin/true` when asked and answers when it has exited. */
const LAUNCHER = `
const { execFile } = require('node:child_process');
process.on('message', (m) => execFile('/bin/true', () => process.send(m)));
`;

async function perLaunch(label: string) {
  const launcher = fork('-e', [LAUNCHER], { execArgv: [], stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  // `node -e LAUNCHER` with an IPC channel: fork's module path is the `-e` flag, its first argument the script
  const ask = (i: number) =>
    new Promise<void>((resolve) => {
      const on = (m: unknown) => {
        if (m === i) {
          launcher.off('message', on);
          resolve();
        }
      };
      launcher.on('message', on);
      launcher.send(i);
    });
  await ask(-1);
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < SPAWNS; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await ask(i);
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  launcher.kill();
  log(
    `${label.padEnd(22)} through a launcher      median per spawn: ${median(cpu).toFixed(1)} ms CPU (parent), ${median(wall).toFixed(1)} ms wall`,
  );
}

function perSpawn(label: string) {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < SPAWNS; i++) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    execFileSync('/bin/true');
    wall.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.push((c.user + c.system) / 1000);
  }
  const rss = Math.round(process.memoryUsage().rss / 2 ** 20);
  log(
    `${label.padEnd(22)} rss ${String(rss).padStart(5)} MiB   median per spawn: ${median(cpu).toFixed(1)} ms CPU (parent), ${median(wall).toFixed(1)} ms wall`,
  );
}

log(
  `machine: ${os.cpus()[0]?.model.trim() ?? 'unknown CPU'} × ${os.cpus().length}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, ` +
    `Node ${process.version} (libuv ${process.versions.uv}), ${os.platform()} ${os.release()}; load ${loadAverage()}`,
);
perSpawn('bare');
const template = await openPglite(undefined);
await runMigrations(template);
const blob = await template.pglite!.dumpDataDir('none');
await template.close();
const open: Database[] = [];
for (let i = 1; i <= 3; i++) {
  open.push(await openPglite(undefined, { loadDataDir: blob, settings: { shared_buffers: '16MB' } }));
  perSpawn(`${i} database(s) open`);
}
await perLaunch('3 database(s) open');
for (const d of open) await d.close();
