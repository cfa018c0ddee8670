import type { Sandbox } from '../../../sandbox/types.js';

/**
 * The agent's `bash` tool: one command in the sandbox, in the checkout, never with network, with
 * a per-command timeout. The working directory persists between calls: the command runs after a
 * `cd` to where the last one ended, and reports where it ended behind a marker line the model
 * never sees. Output is kept head and tail, with a note of what was cut.
 */

/** Characters of output the model sees from one command: the head and the tail of it. */
export const OBSERVATION_CHARS = { head: 4_000, tail: 6_000 };

const MARKER = '__emend_cwd__';

export interface ShellState {
  /** Where the next command starts, relative to the checkout's root ('' for the root). */
  cwd: string;
}

/**
 * Where the commands run: the host directory bound at /workspace, the checkout's path inside the
 * sandbox, and the repository's environment (src/environments/work-tree.ts): its variables, the PATH
 * assignment that puts its toolchains and virtualenv first, the toolchains to bind.
 */
export interface CommandPlace {
  workdir: string;
  /** The checkout inside the sandbox: `/workspace`, or `/workspace/repo` in a work tree. */
  root: string;
  env: Record<string, string>;
  pathAssignment?: string;
  toolRoots?: string[];
}

export interface CommandResult {
  exitCode: number | null;
  timedOut: boolean;
  /** What the model is shown: the output (stdout then stderr), clipped, and how the command ended. */
  observation: string;
  /** The output (stdout then stderr) as the sandbox kept it, unclipped. */
  output: string;
}

/** Keeps the head and the tail of `text`, saying how much was left out between them. */
export function headAndTail(text: string, head = OBSERVATION_CHARS.head, tail = OBSERVATION_CHARS.tail): string {
  if (text.length <= head + tail) return text;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n… [${cut} characters of output left out] …\n${text.slice(-tail)}`;
}

/** A path inside the sandbox as it reports it, relative to the checkout at `root`; undefined when outside. */
function relativeCwd(reported: string, root: string): string | undefined {
  const p = reported.trim();
  if (p === root) return '';
  return p.startsWith(`${root}/`) ? p.slice(root.length + 1) : undefined;
}

export async function runCommand(
  sandbox: Sandbox,
  o: { place: CommandPlace; state: ShellState; command: string; timeoutMs: number; signal: AbortSignal },
): Promise<CommandResult> {
  const { place } = o;
  const start = `${place.root}${o.state.cwd ? `/${o.state.cwd}` : ''}`;
  // The command runs in this shell (so a `cd` in it carries over); the EXIT trap reports where
  // it ended even when it calls `exit`.
  const script = [
    ...(place.pathAssignment ? [`export ${place.pathAssignment}`] : []),
    `cd ${JSON.stringify(start)} 2>/dev/null || cd ${JSON.stringify(place.root)}`,
    `trap 'printf "\\n${MARKER}%s\\n" "$PWD"' EXIT`,
    'eval "$EMEND_COMMAND"',
  ].join('\n');
  const result = await sandbox.run({
    command: ['bash', '-c', script],
    workdir: place.workdir,
    // Python writes no bytecode caches into the checkout (they would look like new files).
    env: { ...place.env, EMEND_COMMAND: o.command, PYTHONDONTWRITEBYTECODE: '1' },
    ...(place.toolRoots?.length ? { toolRoots: place.toolRoots } : {}),
    network: false,
    limits: { timeoutMs: o.timeoutMs },
    signal: o.signal,
  });
  let stdout = result.stdout;
  const at = stdout.lastIndexOf(`\n${MARKER}`);
  if (at >= 0) {
    const where = relativeCwd(stdout.slice(at + MARKER.length + 1).split('\n')[0] ?? '', place.root);
    if (where !== undefined) o.state.cwd = where;
    stdout = stdout.slice(0, at);
  }
  const output = [stdout, result.stderr].filter((s) => s.trim() !== '').join('\n');
  const ending = result.timedOut
    ? `the command did not finish within ${Math.round(o.timeoutMs / 1000)} s and was stopped`
    : result.exceeded?.length
      ? `the command ran into the sandbox's ${result.exceeded.join(' and ')} limit`
      : `exit code ${result.exitCode ?? `none (signal ${result.signal})`}`;
  const cut = result.truncated ? ' (the sandbox kept only the end of a very long output)' : '';
  return {
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    output,
    observation: `${headAndTail(output) || '(no output)'}\n[${ending}${cut}]`,
  };
}
