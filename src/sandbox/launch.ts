import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CommandCgroup } from './cgroups.js';
import { OutputTail } from './output-tail.js';
import type { SandboxResult } from './types.js';

export interface Launch {
  /** The bash that starts it all. */
  bash: string;
  /** What runs once the first process has joined the cgroups: prlimit, bwrap and its arguments, the command. */
  argv: string[];
  /** Host working directory of the first process. */
  cwd: string;
  /** Environment of the first process (bwrap clears it again for the command). */
  env: Record<string, string>;
  /** Data written to file descriptors 3, 4, ... of the first process (bwrap's --ro-bind-data). */
  fdData?: string[];
  stdin?: string;
  timeoutMs: number;
  outputBytes: number;
  signal?: AbortSignal;
  cgroup?: CommandCgroup;
  onOutput?: (stream: 'stdout' | 'stderr', chunk: Buffer) => void;
}

// The first process is bash. It closes every descriptor it inherited beyond stdio and the
// data descriptors (Node opens its own close-on-exec, but descriptors the service itself
// inherited would pass on into the sandbox, where bwrap leaves them open), writes its own
// pid into each cgroup.procs given, then execs the rest: nothing the command starts runs
// outside the cgroups even for a moment. (dash cannot close a descriptor above 9.)
const PREPARE_AND_EXEC = [
  'keep=$(( 2 + $1 )); n=$2; shift 2',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell text, the ${f##*/} is the shell's own.
  'for f in /proc/$$/fd/*; do fd=${f##*/}; if [ "$fd" -gt "$keep" ]; then eval "exec $fd>&-"; fi; done',
  'while [ "$n" -gt 0 ]; do echo $$ > "$1" || { echo "emend sandbox: cannot join the cgroup $1" >&2; exit 125; ' +
    '}; shift; n=$((n - 1)); done',
  'exec "$@"',
].join('\n');

/** pid -> parent pid of every process on the host. */
function parentsOf(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The command name is in parentheses and may hold spaces or parentheses: fields follow the last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // exited while we looked
    }
  }
  return children;
}

/** Every process below `pid` (without cgroups, the only way to find a tree to kill). */
export function descendants(pid: number): number[] {
  const children = parentsOf();
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function kill(pid: number) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone already
  }
}

/**
 * Runs one command: joins the cgroups, execs argv, captures the tail of its output, kills the
 * whole tree on timeout or abort, and resolves only once every process of it has ended.
 */
export async function launch(spec: Launch): Promise<SandboxResult> {
  const started = performance.now();
  const procsFiles = spec.cgroup?.procsFiles ?? [];
  const fdData = spec.fdData ?? [];
  const child = spawn(
    spec.bash,
    [
      '-c',
      PREPARE_AND_EXEC,
      'emend-sandbox',
      String(fdData.length),
      String(procsFiles.length),
      ...procsFiles,
      ...spec.argv,
    ],
    {
      cwd: spec.cwd,
      env: spec.env,
      // Its own process group, so one signal reaches everything that did not leave it.
      detached: true,
      stdio: [spec.stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe', ...fdData.map(() => 'pipe' as const)],
    },
  );
  const stdout = new OutputTail(spec.outputBytes);
  const stderr = new OutputTail(spec.outputBytes);
  const watch = (stream: 'stdout' | 'stderr', chunk: Buffer) => {
    try {
      spec.onOutput?.(stream, chunk);
    } catch {
      // a throwing watcher must not crash the service from a stream event; the command keeps its limits
    }
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    stdout.push(chunk);
    watch('stdout', chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr.push(chunk);
    watch('stderr', chunk);
  });
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  fdData.forEach((data, i) => {
    const fd = child.stdio[3 + i] as Writable;
    fd.on('error', () => {});
    fd.end(data);
  });
  if (spec.stdin !== undefined) {
    // A command that exits without reading its input makes the write fail with EPIPE: not our error.
    child.stdin!.on('error', () => {});
    child.stdin!.end(spec.stdin);
  }

  let timedOut = false;
  let aborted = false;
  const killed: number[] = [];
  const killTree = () => {
    if (child.pid === undefined) return;
    if (!spec.cgroup) killed.push(child.pid, ...descendants(child.pid));
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone
    }
    for (const pid of killed) kill(pid);
    spec.cgroup?.kill();
  };
  const timer = setTimeout(() => {
    timedOut = true;
    killTree();
  }, spec.timeoutMs);
  const onAbort = () => {
    if (timedOut) return;
    aborted = true;
    killTree();
  };

  let exit: { code: number | null; signal: NodeJS.Signals | null };
  try {
    exit = await new Promise((resolve, reject) => {
      child.once('error', reject);
      child.once('exit', (code, signal) => resolve({ code, signal }));
      if (spec.signal?.aborted) onAbort();
      else spec.signal?.addEventListener('abort', onAbort, { once: true });
    });
  } finally {
    clearTimeout(timer);
    spec.signal?.removeEventListener('abort', onAbort);
    // What the command left behind goes too: a server it started in the background, say.
    if (child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // nothing left in the group
      }
    }
    if (spec.cgroup) await spec.cgroup.drain();
  }

  // Without cgroups, wait for the processes found at the kill (bwrap's inner pid 1 included).
  const deadline = Date.now() + 5_000;
  while (killed.some(alive) && Date.now() < deadline) await sleep(5);
  // Output already written is still in the pipes; a descendant that escaped the kill must not hold us.
  let grace: NodeJS.Timeout | undefined;
  await Promise.race([closed, new Promise<void>((resolve) => (grace = setTimeout(resolve, 2_000)))]);
  clearTimeout(grace);
  child.stdout!.destroy();
  child.stderr!.destroy();

  return {
    exitCode: exit.code,
    signal: exit.signal,
    timedOut,
    aborted,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncated: stdout.truncated || stderr.truncated,
    durationMs: Math.round(performance.now() - started),
    ...(spec.cgroup ? { exceeded: spec.cgroup.exceeded() } : {}),
  };
}
