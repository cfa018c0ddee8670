// `npm run soak`: faults and load on PostgreSQL, measured. See bench/README.md ("Soak").
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { type SoakReport, runSoak } from '../test/support/soak/driver.js';

const { values } = parseArgs({
  options: {
    tasks: { type: 'string', default: '1000' },
    workers: { type: 'string', default: '3' },
    'api-nodes': { type: 'string', default: '2' },
    'kill-every': { type: 'string', default: '5-10', description: 'seconds between worker kills, min-max; 0 for none' },
    'pg-down': { type: 'string', default: '4', description: 'seconds PostgreSQL stays down, once; 0 for never' },
    'in-flight': { type: 'string', default: '16' },
    'stale-ms': { type: 'string', default: '5000' },
    'min-uptime': { type: 'string', default: '10', description: 'seconds a worker runs before it may be killed' },
    'bench-tasks': {
      type: 'string',
      default: '120',
      description: 'tasks per measurement with 1, 2, 3 workers; 0 to skip',
    },
    'bench-workers': { type: 'string', default: '1,2,3' },
    'skip-faults': { type: 'boolean', default: false },
    'keep-dir': { type: 'boolean', default: false },
  },
});

const log = (line: string) => console.log(line);
const int = (v: string | undefined) => Number.parseInt(v ?? '0', 10);
const machine =
  `${cpus()[0]?.model.trim()}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ` +
  `Node ${process.version}`;

function summary(r: SoakReport) {
  return [
    `tasks ${r.tasks} (posted ${r.posted}, continued ${r.continued}); statuses ${JSON.stringify(r.statuses)}`,
    `by kind ${JSON.stringify(r.byKind)}`,
    ...r.reasons.map((x) => `  ${x.status} ×${x.n}: ${x.reason}`),
    `wall ${r.wallS.toFixed(1)} s, ${r.tasksPerS.toFixed(2)} tasks/s; POST → terminal ` +
      `p50 ${(r.latencyMs.p50 / 1000).toFixed(2)} s, p99 ${(r.latencyMs.p99 / 1000).toFixed(2)} s, ` +
      `max ${(r.latencyMs.max / 1000).toFixed(2)} s`,
    `worker kills ${r.kills}; steps done again after a kill or the outage ${r.rerunsAfterKill}; ` +
      `crashes ${JSON.stringify(r.crashes)}`,
    r.postgresDown
      ? `PostgreSQL down ${(r.postgresDown.fromMs / 1000).toFixed(1)}–${(r.postgresDown.toMs / 1000).toFixed(1)} s`
      : 'PostgreSQL not restarted',
    `HTTP ${r.http.total} responses; 5xx ${JSON.stringify(r.http.by5xx)}, 503 during the ` +
      `outage ${r.http.unavailableInWindow}, other 5xx or failed requests ${r.http.outside.length}`,
    `credits: ${r.ledger.accounts} accounts, holds ${r.ledger.holds} = captures ${r.ledger.captures} + ` +
      `releases ${r.ledger.releases}; grants ${r.ledger.grants}`,
    r.violations.length
      ? `VIOLATIONS (${r.violations.length}):\n${r.violations.map((v) => `  - ${v.check}: ${v.detail}`).join('\n')}`
      : 'violations: none',
  ].join('\n');
}

console.log(
  `emend soak, ${new Date().toISOString()}\nmachine: ${machine}\nload average (1 min) at ` +
    `start: ${loadavg()[0]!.toFixed(1)}`,
);
let failed = false;

if (!values['skip-faults']) {
  const [min, max] = (values['kill-every'] ?? '3-6').split('-').map(Number);
  const downS = Number(values['pg-down']);
  console.log(
    `\n## faults: ${values.tasks} tasks, ${values['api-nodes']} API nodes, ${values.workers} workers ` +
      `(concurrency 2), kill every ${values['kill-every']} s, PostgreSQL down ${downS} s once`,
  );
  const r = await runSoak({
    tasks: int(values.tasks),
    workers: int(values.workers),
    apiNodes: int(values['api-nodes']),
    killEveryMs: min ? [min * 1000, (max ?? min) * 1000] : null,
    postgresRestart: downS > 0 ? { afterShare: 0.4, downMs: downS * 1000 } : null,
    mix: { preview: 0.08, manual: 0.12, kill: 0.08, fails: 0.08, 'fails-once': 0.08 },
    inFlight: int(values['in-flight']),
    staleMs: int(values['stale-ms']),
    minWorkerUptimeMs: int(values['min-uptime']) * 1000,
    log,
    timeoutMs: 3 * 3600_000,
    keepDir: values['keep-dir'],
  });
  console.log(summary(r));
  if (r.violations.length) failed = true;
}

const benchTasks = int(values['bench-tasks']);
if (benchTasks > 0) {
  const rows: string[] = [];
  for (const workers of (values['bench-workers'] ?? '').split(',').map(Number)) {
    console.log(
      `\n## throughput: ${benchTasks} plain pull-request fix tasks, 2 API nodes, ${workers} worker process(es) ` +
        `(concurrency 2), no faults`,
    );
    const r = await runSoak({
      tasks: benchTasks,
      workers,
      apiNodes: int(values['api-nodes']),
      killEveryMs: null,
      postgresRestart: null,
      mix: {},
      inFlight: 4 * workers,
      staleMs: int(values['stale-ms']),
      minWorkerUptimeMs: 0,
      log,
      timeoutMs: 3600_000,
    });
    console.log(summary(r));
    if (r.violations.length) failed = true;
    rows.push(
      `${String(workers).padStart(7)}  ${String(r.tasks).padStart(5)}  ${String(4 * workers).padStart(9)}  ${r.tasksPerS.toFixed(2).padStart(7)}  ${(r.latencyMs.p50 / 1000).toFixed(2).padStart(6)}  ${(r.latencyMs.p99 / 1000).toFixed(2).padStart(6)}  ${loadavg()[0]!.toFixed(1).padStart(8)}`,
    );
  }
  console.log(`\nworkers  tasks  in flight  tasks/s  p50 s   p99 s   load avg\n${rows.join('\n')}`);
}
console.log(`\nload average (1 min) at end: ${loadavg()[0]!.toFixed(1)}`);
process.exit(failed ? 1 : 0);
