import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyAudit } from '../../src/audit/verify.js';
import { auditEvents } from '../../src/db/schema.js';
import { type Worker, startWorker } from '../../src/engine/worker.js';
import { recordingSteps } from '../support/engine.js';
import { type Harness, newAccount, startHarness } from '../support/harness.js';

// The worker folds audit rows past EMEND_AUDIT_RETENTION_DAYS by itself, once an hour (its
// periodic job `audit-retention`), on the harness's clock: nothing here calls the fold.

const DAY = 86_400_000;
const MINUTE = 60_000;

let h: Harness;
let worker: Worker | undefined;
beforeAll(async () => {
  h = await startHarness({ EMEND_AUDIT_RETENTION_DAYS: '30' });
});
afterAll(async () => {
  await worker?.stop();
  await h?.close();
});

const rowsOf = (workspaceId: string) =>
  h.deps.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, workspaceId)).orderBy(asc(auditEvents.seq));

describe('the worker’s audit retention', () => {
  it('folds the rows past the retention on its own schedule, at most once an hour; the chain still verifies', async () => {
    const start = h.clock.now().getTime();
    const ada = await newAccount(h, { scm: false });
    const mint = async (name: string) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/v1/me/tokens',
        headers: ada.auth,
        payload: { name },
      });
      expect(res.statusCode, res.body).toBe(201);
    };
    await mint('old-1');
    await mint('old-2');
    h.clock.set(new Date(start + 30 * MINUTE));
    await mint('edge');
    h.clock.set(new Date(start + 30 * DAY + 10 * MINUTE));

    // Its maintenance timer, not a call from here, runs the periodic jobs.
    worker = await startWorker(h.deps, recordingSteps().steps, { concurrency: 0, maintenanceMs: 50 });
    await vi.waitFor(
      async () => expect((await rowsOf(ada.workspace.id)).some((r) => r.kind === 'summary')).toBe(true),
      {
        timeout: 20_000,
        interval: 50,
      },
    );
    const folded = await rowsOf(ada.workspace.id);
    expect(folded.map((r) => [r.seq, r.kind, r.action])).toEqual([
      [3, 'event', 'token.minted'],
      [4, 'summary', 'audit.summarised'],
    ]);
    expect(folded[1]!.detail).toMatchObject({
      folded: { from_seq: 1, to_seq: 2, rows: 2, counts: { 'token.minted': 2 } },
    });
    expect(await verifyAudit(h.deps.db, ada.workspace.id)).toMatchObject({ rows: 2, broken: [] });

    // Half an hour on, the third row is past the retention too; but the job ran less than an hour
    // ago, so the worker's passes leave it.
    h.clock.set(new Date(start + 30 * DAY + 40 * MINUTE));
    await worker.maintain();
    await worker.maintain();
    expect((await rowsOf(ada.workspace.id)).map((r) => r.seq)).toEqual([3, 4]);

    // An hour after the last run, the next pass folds it (the first summary, newer, stays).
    h.clock.set(new Date(start + 30 * DAY + 70 * MINUTE));
    await vi.waitFor(async () => expect((await rowsOf(ada.workspace.id)).map((r) => r.seq)).toEqual([4, 5]), {
      timeout: 20_000,
      interval: 50,
    });
    expect((await rowsOf(ada.workspace.id))[1]!.detail).toMatchObject({
      folded: { from_seq: 3, to_seq: 3, rows: 1, counts: { 'token.minted': 1 } },
    });
    expect(await verifyAudit(h.deps.db, ada.workspace.id)).toMatchObject({ rows: 2, broken: [] });
    expect(h.logLines.join('\n')).not.toMatch(/maintenance failed/);
    await worker.stop();
    worker = undefined;
  });
});
