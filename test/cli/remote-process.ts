import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { emendNodeArgs } from '../support/emend-process.js';
import { type ModelService, startModelService } from '../support/model-service.js';
import { cliEnv, type Exit } from './cli-process.js';

const repoRoot = resolve(import.meta.dirname, '../..');
/** The CLI from source, as spawnEmend runs it. */
const NODE_ARGS = emendNodeArgs();
const live = new Set<ChildProcess>();
const made: string[] = [];

/** The service with the production steps, one worker and the scripted model, on a real port. */
export async function startRemoteServer(): Promise<ModelService & { url: string }> {
  const svc = await startModelService();
  const url = await svc.h.app.listen({ host: '127.0.0.1', port: 0 });
  return { ...svc, url };
}

/** A new, empty XDG_CONFIG_HOME, removed by removeConfigDirs(). */
export function newConfigHome(): string {
  const dir = mkdtempSync(join(tmpdir(), 'emend-config-'));
  made.push(dir);
  return dir;
}

export function removeConfigDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The CLI's environment: a config home of its own, and the server and token when given. */
export function remoteEnv(vars: { server?: string; token?: string; config?: string; extra?: Record<string, string> }) {
  return cliEnv({
    XDG_CONFIG_HOME: vars.config ?? newConfigHome(),
    EMEND_SERVER: vars.server,
    EMEND_TOKEN: vars.token,
    ...vars.extra,
  });
}

function collect(child: ChildProcess, timeoutMs: number, what: string): Promise<Exit> {
  live.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise<Exit>((resolveExit, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} still running after ${timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, timeoutMs);
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      live.delete(child);
      resolveExit({ code, signal, stdout, stderr });
    });
  });
}

/** Runs `emend ARGS` with stdin piped (`input`, then end of file), stdout and stderr piped. */
export function runRemote(args: string[], env: NodeJS.ProcessEnv, input = '', timeoutMs = 120_000): Promise<Exit> {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], { cwd: repoRoot, env });
  const exited = collect(child, timeoutMs, `emend ${args.join(' ')}`);
  child.stdin.end(input);
  return exited;
}

/** Starts `emend ARGS` piped and lets the test read its output as it comes. */
export function startRemote(args: string[], env: NodeJS.ProcessEnv, timeoutMs = 120_000) {
  const child = spawn(process.execPath, [...NODE_ARGS, ...args], { cwd: repoRoot, env });
  let seen = '';
  let seenErr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (seen += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (seenErr += d));
  const exited = collect(child, timeoutMs, `emend ${args.join(' ')}`);
  child.stdin.end();
  return { exited, output: () => seen, errors: () => seenErr };
}

const quote = (arg: string) => `'${arg.replaceAll("'", `'\\''`)}'`;

/** The terminal's text without colours and cursor moves (what a reader of the screen sees, roughly). */
export const plain = (text: string) =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape sequences are what is removed
  text.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '');

/**
 * Starts `emend ARGS` under a real pseudo-terminal (util-linux `script`): stdin, stdout and
 * stderr are a terminal of 120 columns (stdin /dev/null with stdinFromNull). Each answer is typed
 * once its prompt has appeared on the screen; `screen()` is everything shown so far.
 */
export function startInTerminal(
  args: string[],
  env: NodeJS.ProcessEnv,
  answers: { when: RegExp; type: string }[] = [],
  options: { stdinFromNull?: boolean; timeoutMs?: number } = {},
) {
  const argv = [process.execPath, ...NODE_ARGS, ...args];
  const redirect = options.stdinFromNull ? ' </dev/null' : '';
  const command = `stty cols 120 rows 40; exec ${argv.map(quote).join(' ')}${redirect}`;
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: repoRoot,
    env: { ...env, SHELL: '/bin/sh', TERM: 'xterm-256color' },
  });
  const pending = [...answers];
  let all = '';
  let sinceAnswer = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    all += d;
    sinceAnswer += d;
    const next = pending[0];
    if (next?.when.test(plain(sinceAnswer))) {
      pending.shift();
      sinceAnswer = '';
      child.stdin.write(next.type);
    }
  });
  // stdin stays open until the end: its end of file would reach the program as a closed terminal.
  const exited = collect(child, options.timeoutMs ?? 120_000, `emend ${args.join(' ')} (terminal)`).finally(() =>
    child.stdin.destroy(),
  );
  return { exited, screen: () => plain(all) };
}

/** Runs `emend ARGS` under a pseudo-terminal to its end (startInTerminal). */
export const runInTerminal = (...args: Parameters<typeof startInTerminal>): Promise<Exit> =>
  startInTerminal(...args).exited;

/** Kills whatever a test left running. */
export async function killRemotes(): Promise<void> {
  await Promise.all(
    [...live].map(
      (child) =>
        new Promise<void>((done) => {
          if (child.exitCode !== null || child.signalCode !== null) return done();
          child.once('close', () => done());
          child.kill('SIGKILL');
        }),
    ),
  );
}
