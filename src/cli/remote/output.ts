import pc from 'picocolors';

/**
 * Exit codes of the remote commands, documented in docs/client.md. A followed task's end is
 * 0, 1 or 2 so CI can gate on it; the others are kept apart from those so a script can tell
 * "the task failed" from "the command never got a task to fail".
 */
export const EXIT = {
  ok: 0,
  /** the followed task ended `failed` */
  failed: 1,
  /** the followed task ended `cancelled` (killed, declined at a gate, gate timed out) */
  cancelled: 2,
  /** the server refused the request or could not be reached */
  api: 3,
  /** the command line is wrong */
  usage: 64,
  /** an unexpected fault of the command itself */
  internal: 70,
  /** not logged in, or the saved login is unreadable */
  config: 78,
  /** interrupted (Ctrl-C) while following; the task goes on */
  interrupted: 130,
} as const;

export type Colors = ReturnType<typeof pc.createColors>;

/** Where a command writes and how: a terminal gets colours and spinners, a pipe plain lines. */
export interface Output {
  tty: boolean;
  json: boolean;
  color: Colors;
  out(line: string): void;
  err(line: string): void;
}

/**
 * Colours only on a terminal (NO_COLOR wins, FORCE_COLOR forces), decided here rather than by
 * picocolors, which also colours whenever CI is set: a CI log read as plain text stays plain.
 */
export function makeOutput(env: NodeJS.ProcessEnv, json: boolean): Output {
  const tty = process.stdout.isTTY === true && !json;
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0';
  const colored = !json && !env.NO_COLOR && (forced || (tty && env.TERM !== 'dumb'));
  return {
    tty,
    json,
    color: pc.createColors(colored),
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  };
}

/** Prints `value` as indented JSON; answers EXIT.ok, so an action can end `return printJson(o, value)`. */
export function printJson(output: Output, value: unknown): number {
  output.out(JSON.stringify(value, null, 2));
  return EXIT.ok;
}

/** Prints `value` as JSON with --json, else the lines `text` makes of it; the exit code for success. */
export function show<T>(ctx: { o: Output }, value: T, text: (v: T) => string[]): number {
  if (ctx.o.json) printJson(ctx.o, value);
  else for (const line of text(value)) ctx.o.out(line);
  return EXIT.ok;
}

/** A unified diff with added lines green, removed red, hunk headers cyan and file headers bold. */
export function coloredDiff(diff: string, c: Colors): string {
  return diff
    .split('\n')
    .map((line) => {
      if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ')) return c.bold(line);
      if (line.startsWith('@@')) return c.cyan(line);
      if (line.startsWith('+')) return c.green(line);
      if (line.startsWith('-')) return c.red(line);
      return line;
    })
    .join('\n');
}

/** Rows as aligned columns: every column as wide as its widest cell, the last one left unpadded. */
export function table(rows: string[][]): string[] {
  const widths: number[] = [];
  for (const row of rows) for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

/** A list a command prints: its header, a row per item, and the line saying there are none. */
export interface ListTable<T> {
  header: string[];
  row: (item: T) => string[];
  /** Printed instead of the table when the list is empty; without it, the header alone. */
  empty?: string;
}

/** `items` as JSON with --json, else as a table under its header (or the `empty` line); the exit code for success. */
export function showList<T>(ctx: { o: Output }, items: T[], list: ListTable<T>): number {
  return show(ctx, items, (xs) =>
    xs.length === 0 && list.empty !== undefined ? [list.empty] : table([list.header, ...xs.map(list.row)]),
  );
}

/** One line of text, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** Seconds with one decimal, minutes past a minute: 0.4s, 12.0s, 3m05s. */
export function elapsed(ms: number): string {
  if (ms < 60_000) return `${(Math.max(ms, 0) / 1000).toFixed(1)}s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** The colour a task or step status is shown in. */
export function paintStatus(status: string, c: Colors): string {
  if (status === 'done') return c.green(status);
  if (status === 'failed') return c.red(status);
  if (status === 'cancelled' || status === 'skipped') return c.yellow(status);
  if (status.startsWith('awaiting_')) return c.magenta(status);
  return c.cyan(status);
}
