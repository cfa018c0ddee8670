import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
export { freePort } from '../support/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnEmend } from '../support/emend-process.js';

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface CliProcess {
  child: ChildProcess;
  readonly stdout: string;
  readonly stderr: string;
  exited: Promise<Exit>;
}

const live = new Set<ChildProcess>();

/**
 * An environment built from scratch, not inherited: a DATABASE_URL, PORT or secret key in
 * the test runner's environment must not leak into the process under test.
 */
export function cliEnv(vars: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    LOG_LEVEL: 'warn',
  };
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return env;
}

export function startCli(args: string[], env: NodeJS.ProcessEnv): CliProcess {
  const child = spawnEmend(args, env);
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<Exit>((resolve) => {
    child.once('close', (code, signal) => {
      live.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
  return {
    child,
    get stdout() {
      return stdout;
    },
    get stderr() {
      return stderr;
    },
    exited,
  };
}

/** Runs a CLI command to its end; a command still running after timeoutMs is killed and reported. */
export async function runCli(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 45_000): Promise<Exit> {
  const proc = startCli(args, env);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      proc.child.kill('SIGKILL');
      reject(
        new Error(
          `emend ${args.join(' ')} still running after ${timeoutMs} ms\nstdout: ${proc.stdout}\nstderr: ${proc.stderr}`,
        ),
      );
    }, timeoutMs);
  });
  try {
    return await Promise.race([proc.exited, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

/** Kills whatever a test left running. */
export async function killAll(): Promise<void> {
  const children = [...live];
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('close', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
}

/** Polls GET /health until it answers 200; fails at once if the server process exits first. */
export async function waitForHealth(
  baseUrl: string,
  server: CliProcess,
  timeoutMs = 45_000,
): Promise<{ ok: boolean; database: string }> {
  const deadline = Date.now() + timeoutMs;
  let exited: Exit | undefined;
  void server.exited.then((e) => (exited = e));
  for (;;) {
    if (exited)
      throw new Error(
        `the server exited (code ${exited.code}) before it was up\nstdout: ${exited.stdout}\nstderr: ${exited.stderr}`,
      );
    try {
      const res = await fetch(`${baseUrl}/health`);
      if (res.status === 200) return (await res.json()) as { ok: boolean; database: string };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`no healthy server at ${baseUrl} after ${timeoutMs} ms\nstderr: ${server.stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The one JSON line a command printed on stdout. */
export function jsonLine<T = Record<string, unknown>>(exit: Exit): T {
  const lines = exit.stdout.split('\n').filter((l) => l.trim() !== '');
  if (exit.code !== 0 || lines.length !== 1) {
    throw new Error(
      `expected exit 0 and one line on stdout, got code ${exit.code}\nstdout: ${exit.stdout}\nstderr: ${exit.stderr}`,
    );
  }
  return JSON.parse(lines[0]!) as T;
}

const made: string[] = [];

/** A new, empty data dir, removed by removeDataDirs(). */
export function newDataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'emend-cli-'));
  made.push(dir);
  return dir;
}

/**
 * A new data dir holding a copy of a migrated PGlite database: the first start of a data
 * dir runs initdb in WASM (seconds), a copy opens in well under one.
 */
export function copyOfDataDir(template: string): string {
  const dir = newDataDir();
  cpSync(join(template, 'pgdata'), join(dir, 'pgdata'), { recursive: true });
  return dir;
}

export function removeDataDirs() {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
