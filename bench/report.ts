import type { LoadResult } from './load-worker.js';

/** One run: autocannon's figures plus the server process's CPU time per request. */
export type RunFigures = LoadResult & { cpuMsPerRequest: number };

export interface Measurement {
  endpoint: string;
  database: 'pglite' | 'postgres';
  runs: Record<'emend' | 'bare', RunFigures[]>;
}

export const TARGET_RATIO = 0.8;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function statusSummary(runs: LoadResult[]): string {
  const codes: Record<string, number> = {};
  for (const r of runs) for (const [c, n] of Object.entries(r.statusCodes)) codes[c] = (codes[c] ?? 0) + n;
  return Object.entries(codes)
    .sort()
    .map(([c, n]) => `${c}×${n}`)
    .join(' ');
}

/** The summary table: medians over the runs, and emend's share of the bare route's rate. */
export function printTable(results: Measurement[], repeats: number) {
  const header = [
    'endpoint',
    'database',
    'app',
    'req/s',
    'p50 ms',
    'p99 ms',
    'CPU ms/req',
    'non-2xx',
    'errors',
    'runs req/s',
    'responses',
  ];
  const rows: string[][] = [header];
  const ratios: string[] = [];
  for (const m of results) {
    const rate: Record<string, number> = {};
    for (const app of ['emend', 'bare'] as const) {
      const runs = m.runs[app];
      rate[app] = median(runs.map((r) => r.reqPerSec));
      rows.push([
        app === 'emend' ? m.endpoint : '',
        app === 'emend' ? m.database : '',
        app,
        rate[app]!.toFixed(0),
        median(runs.map((r) => r.p50)).toFixed(1),
        median(runs.map((r) => r.p99)).toFixed(1),
        median(runs.map((r) => r.cpuMsPerRequest)).toFixed(2),
        String(sum(runs.map((r) => r.non2xx))),
        String(sum(runs.map((r) => r.errors + r.timeouts))),
        runs.map((r) => r.reqPerSec.toFixed(0)).join(' / '),
        statusSummary(runs),
      ]);
    }
    const ratio = rate.emend! / rate.bare!;
    const cpu = (app: 'emend' | 'bare') => median(m.runs[app].map((r) => r.cpuMsPerRequest));
    ratios.push(
      `${m.endpoint.padEnd(20)} ${m.database.padEnd(9)} ratio emend/bare = ${ratio.toFixed(3)}  ` +
        `(${ratio >= TARGET_RATIO ? 'meets' : 'BELOW'} the ${TARGET_RATIO} target); ` +
        `server CPU per request, bare/emend = ${(cpu('bare') / cpu('emend')).toFixed(3)}`,
    );
  }
  const widths = header.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log(
    `\nresults (req/s is completed requests ÷ run time; CPU ms/req is the server process's CPU time per ` +
      `request (PGlite's included, PostgreSQL's not); ` +
      `every figure is the median of ${repeats} runs; non-2xx and errors are totals)`,
  );
  for (const [i, r] of rows.entries()) {
    console.log(
      r
        .map((cell, c) => (c >= 3 && c <= 8 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
        .join('  ')
        .trimEnd(),
    );
    if (i === 0) console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  }
  console.log('');
  for (const line of ratios) console.log(line);
}
