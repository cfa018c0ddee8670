import { describe, expect, it } from 'vitest';
import { runSoak } from '../support/soak/driver.js';

// The short form of `npm run soak` (bench/soak.ts): real processes on PostgreSQL (two
// `emend serve --no-worker`, three `emend worker`), 50 fix tasks of every kind through the
// real pipeline (scripted model, fake GitHub, sandboxed validator), one worker SIGKILLed
// mid-run and PostgreSQL halted once. PostgreSQL only: the deployment under test has its own
// cluster, and several processes need a database they can share.
describe('soak, short form', () => {
  it('every task ends with a reason; no step twice in one attempt; credits balance; no 5xx but 503 while the ' +
    'database is down', {
    timeout: 480_000,
  }, async () => {
    const lines: string[] = [];
    const report = await runSoak({
      tasks: 50,
      workers: 3,
      apiNodes: 2,
      // One kill, 8 s in (of a worker up 5 s or more).
      killEveryMs: [8_000, 8_000],
      maxKills: 1,
      postgresRestart: { afterShare: 0.5, downMs: 2_000 },
      mix: { preview: 0.1, manual: 0.1, kill: 0.1, fails: 0.1, 'fails-once': 0.1 },
      inFlight: 8,
      staleMs: 3_000,
      minWorkerUptimeMs: 5_000,
      log: (l) => lines.push(l),
      timeoutMs: 420_000,
    });
    expect(report.violations, lines.join('\n')).toEqual([]);
    expect(report.kills).toBe(1);
    expect(report.postgresDown).toBeDefined();
    const ended = Object.values(report.statuses).reduce((a, b) => a + b, 0);
    expect(ended).toBeGreaterThanOrEqual(50);
    expect(report.statuses.done).toBeGreaterThan(0);
    expect(report.statuses.cancelled).toBeGreaterThan(0); // the kind 'kill'
    expect(report.ledger.holds).toBe(report.ledger.captures + report.ledger.releases);
    expect(report.http.outside).toEqual([]);
  });
});
