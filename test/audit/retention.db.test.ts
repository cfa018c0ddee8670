import { and, asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/audit/record.js';
import { applyAuditRetention, foldWorkspace } from '../../src/audit/retention.js';
import { verifyAudit } from '../../src/audit/verify.js';
import type { Config } from '../../src/config/config.js';
import type { Database } from '../../src/db/client.js';
import { auditEvents } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { tamperWithAudit } from '../support/audit-db.js';
import { openTestDatabase } from '../support/test-db.js';

// Retention folds old rows into a summary row that is itself chained: the chain still verifies,
// the counts say what was folded, and an edited summary or a row removed after it is still found.

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const DAY = 86_400_000;
let now = Date.parse('2026-01-01T00:00:00Z');
const clock = { now: () => new Date(now) };
const actor = {
  accountId: newId(),
  tokenId: newId(),
  sessionId: null,
  role: 'owner',
  requestId: null,
  clientAddress: null,
  userAgent: null,
};
const record = (workspaceId: string, action: string, decision: 'allowed' | 'denied' = 'allowed') =>
  database.db.transaction((tx) => recordAudit(tx, { clock }, { workspaceId, action, decision, actor }));
const rowsOf = (workspaceId: string) =>
  database.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, workspaceId)).orderBy(asc(auditEvents.seq));

describe('audit retention', () => {
  it('folds the rows past the retention into a chained summary; the chain still verifies', async () => {
    const ws = newId();
    await record(ws, 'token.minted');
    await record(ws, 'token.minted');
    await record(ws, 'settings', 'denied');
    now += 40 * DAY;
    await record(ws, 'key.added');
    const before = await rowsOf(ws);
    const config = { auditRetentionDays: 30 } as Config;
    expect(await applyAuditRetention({ db: database.db, clock, config })).toBe(3);

    const after = await rowsOf(ws);
    expect(after.map((r) => [r.seq, r.kind, r.action])).toEqual([
      [4, 'event', 'key.added'],
      [5, 'summary', 'audit.summarised'],
    ]);
    expect(after[1]!.detail).toEqual({
      folded: {
        from_seq: 1,
        to_seq: 3,
        last_hash: before[2]!.hash,
        first_at: before[0]!.at.toISOString(),
        last_at: before[2]!.at.toISOString(),
        rows: 3,
        counts: { 'token.minted': 2, 'settings:denied': 1 },
      },
    });
    expect((await verifyAudit(database.db, ws)).broken).toEqual([]);

    // A second fold, later: the first summary's counts are carried into the next.
    await record(ws, 'token.revoked');
    now += 40 * DAY;
    expect(await applyAuditRetention({ db: database.db, clock, config })).toBe(3);
    const again = await rowsOf(ws);
    expect(again.map((r) => [r.seq, r.kind])).toEqual([[7, 'summary']]);
    expect(again[0]!.detail).toMatchObject({
      folded: {
        from_seq: 1,
        to_seq: 6,
        rows: 5,
        counts: { 'token.minted': 2, 'settings:denied': 1, 'key.added': 1, 'token.revoked': 1 },
      },
    });
    expect((await verifyAudit(database.db, ws)).broken).toEqual([]);
    await record(ws, 'key.removed');
    expect((await verifyAudit(database.db, ws)).broken).toEqual([]);
  });

  it('does nothing at 0 days, and an edited summary or a row removed after the fold is found', async () => {
    const ws = newId();
    for (const action of ['a.one', 'a.two', 'a.three', 'a.four']) await record(ws, action);
    expect(await applyAuditRetention({ db: database.db, clock, config: { auditRetentionDays: 0 } as Config })).toBe(0);
    now += 10 * DAY;
    await record(ws, 'a.five');
    const cutoff = new Date(now - 5 * DAY);
    expect(await foldWorkspace(database.db, ws, cutoff, clock.now())).toBe(4);
    expect((await verifyAudit(database.db, ws)).broken).toEqual([]);

    const at = (seq: number) => and(eq(auditEvents.workspaceId, ws), eq(auditEvents.seq, seq));
    const [summary] = await database.db.select().from(auditEvents).where(at(6));
    const folded = (summary!.detail as { folded: Record<string, unknown> }).folded;
    // Edited past the table's append-only trigger, as someone who may alter the table could.
    await tamperWithAudit(database.db, (tx) =>
      tx
        .update(auditEvents)
        .set({ detail: { folded: { ...folded, rows: 1 } } })
        .where(at(6)),
    );
    expect((await verifyAudit(database.db, ws)).broken).toMatchObject([
      { seq: 6, reason: expect.stringMatching(/edited/) },
    ]);
    await tamperWithAudit(database.db, (tx) => tx.update(auditEvents).set({ detail: summary!.detail }).where(at(6)));
    expect((await verifyAudit(database.db, ws)).broken).toEqual([]);

    // The first row left after the fold removed: no summary accounts for row 5.
    await tamperWithAudit(database.db, (tx) => tx.delete(auditEvents).where(at(5)));
    expect((await verifyAudit(database.db, ws)).broken).toMatchObject([
      { seq: 6, reason: expect.stringMatching(/rows 1 to 5 are missing/) },
    ]);
  });
});
