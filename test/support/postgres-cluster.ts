import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { tempDirForOtherUsers } from './other-users.js';
import { freePort } from './ports.js';

/** The newest PostgreSQL server bin dir on this machine, or undefined when there is none. */
export function findPostgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : undefined;
}

export interface Cluster {
  url: (database: string) => string;
  /** Stops the server as a crash would (immediate shutdown), keeping its data: connections are cut. */
  halt(): void;
  /** Starts it again on the same data and port (crash recovery runs). */
  resume(): void;
  stop(): void;
}

/**
 * A throwaway PostgreSQL cluster on a free loopback port, fsync off (and synchronous_commit
 * off unless crashSafe). PostgreSQL refuses to
 * run as root, so as root the cluster belongs to the postgres user.
 */
export async function startCluster(bin: string, options: { crashSafe?: boolean } = {}): Promise<Cluster> {
  // Where the postgres user can get to even when TMPDIR is private; the cluster reads nothing else
  // of ours (the checkout may be under a 0700 directory).
  const dir = tempDirForOtherUsers('emend-pg-', 0o700);
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string, args: string[]) => {
    // cwd: its own directory, not the checkout, which the postgres user may not enter.
    const r = asRoot
      ? spawnSync('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args], { cwd: dir, encoding: 'utf8' })
      : spawnSync(join(bin, cmd), args, { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr || r.stdout}`);
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const opts =
    `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c full_page_writes=off -c max_connections=300` +
    // synchronous_commit=off answers a commit before its WAL is written: a crash (halt) would lose
    // the last ~200 ms of commits. crashSafe keeps it on, so what was committed survives a halt
    // (fsync stays off: the machine itself does not crash here, only PostgreSQL).
    (options.crashSafe ? '' : ' -c synchronous_commit=off');
  const start = () => run('pg_ctl', ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start']);
  start();
  return {
    url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
    halt() {
      run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
    },
    resume: start,
    stop() {
      try {
        // Already halted is fine: the data goes either way.
        if (existsSync(join(data, 'postmaster.pid'))) run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
