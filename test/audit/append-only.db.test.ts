import { and, asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/audit/record.js';
import { AUDIT_FOLD_SETTING, foldWorkspace } from '../../src/audit/retention.js';
import { verifyAudit } from '../../src/audit/verify.js';
import type { Database } from '../../src/db/client.js';
import { auditEvents } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { openTestDatabase } from '../support/test-db.js';

// audit_events is append-only in the database (migrations/0025_audit_append_only.sql): UPDATE,
// DELETE and TRUNCATE are refused whoever issues them, except the retention fold's DELETE in the
// transaction it marks; after a fold the chain still verifies.

let database: Database;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database?.close();
});

const DAY = 86_400_000;
let now = Date.parse('2026-03-01T00:00:00Z');
const clock = { now: () => new Date(now) };
const actor = {
  accountId: newId(),
  tokenId: newId(),
  sessionId: null,
  role: 'owner',
  requestId: 'req-append-only',
  clientAddress: '203.0.113.7',
  userAgent: 'append-only-test',
};
const record = (workspaceId: string, action: string) =>
  database.db.transaction((tx) => recordAudit(tx, { clock }, { workspaceId, action, actor }));
const rowsOf = (workspaceId: string) =>
  database.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, workspaceId)).orderBy(asc(auditEvents.seq));
const at = (workspaceId: string, seq: number) =>
  and(eq(auditEvents.workspaceId, workspaceId), eq(auditEvents.seq, seq));

/** The database's refusal of a statement, as the driver reports it (Drizzle wraps it; the cause has PostgreSQL's words). */
async function refusal(statement: Promise<unknown>): Promise<string> {
  const err = await statement.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the statement was not refused').toBeInstanceOf(Error);
  const e = err as Error & { cause?: Error };
  return `${e.message} ${e.cause?.message ?? ''}`;
}

describe('audit_events is append-only', () => {
  it('refuses an UPDATE and a DELETE by SQL, and a TRUNCATE; every row stays as it was', async () => {
    const ws = newId();
    for (const action of ['token.minted', 'key.added', 'token.revoked']) await record(ws, action);
    const before = await rowsOf(ws);

    expect(await refusal(database.db.update(auditEvents).set({ actorRole: 'viewer' }).where(at(ws, 2)))).toMatch(
      /append-only: UPDATE refused/,
    );
    expect(await refusal(database.db.execute(sql`update audit_events set detail = '{}'::jsonb`))).toMatch(
      /append-only: UPDATE refused/,
    );
    expect(await refusal(database.db.delete(auditEvents).where(at(ws, 3)))).toMatch(/append-only: DELETE refused/);
    expect(await refusal(database.db.execute(sql`delete from audit_events`))).toMatch(/append-only: DELETE refused/);
    expect(await refusal(database.db.execute(sql`truncate audit_events`))).toMatch(/append-only: TRUNCATE refused/);

    expect(await rowsOf(ws)).toEqual(before);
    expect(await verifyAudit(database.db, ws)).toMatchObject({ rows: 3, broken: [] });
  });

  it("lets only a DELETE through, and only in the transaction marked as the fold's", async () => {
    const ws = newId();
    await record(ws, 'token.minted');
    // The mark does not let an UPDATE through.
    const update = database.db.transaction(async (tx) => {
      await tx.execute(sql`select set_config(${AUDIT_FOLD_SETTING}, 'on', true)`);
      await tx.update(auditEvents).set({ actorRole: 'viewer' }).where(at(ws, 1));
    });
    expect(await refusal(update)).toMatch(/append-only: UPDATE refused/);
    // The mark is the transaction's own: it is gone once that has ended.
    await database.db.transaction(async (tx) => {
      await tx.execute(sql`select set_config(${AUDIT_FOLD_SETTING}, 'on', true)`);
    });
    expect(await refusal(database.db.delete(auditEvents).where(at(ws, 1)))).toMatch(/append-only: DELETE refused/);
    expect(await rowsOf(ws)).toHaveLength(1);
  });

  it('lets the retention fold delete the rows it summarises; the chain verifies after it and after later rows', async () => {
    const ws = newId();
    for (const action of ['token.minted', 'member.invited', 'member.joined']) await record(ws, action);
    now += 40 * DAY;
    await record(ws, 'key.added');
    expect(await foldWorkspace(database.db, ws, new Date(now - 30 * DAY), clock.now())).toBe(3);
    expect((await rowsOf(ws)).map((r) => [r.seq, r.kind, r.action])).toEqual([
      [4, 'event', 'key.added'],
      [5, 'summary', 'audit.summarised'],
    ]);
    expect(await verifyAudit(database.db, ws)).toMatchObject({ rows: 2, broken: [] });
    await record(ws, 'key.removed');
    expect(await verifyAudit(database.db, ws)).toMatchObject({ rows: 3, broken: [] });
    // The summary is a row like any other: no UPDATE or DELETE reaches it either.
    expect(await refusal(database.db.delete(auditEvents).where(at(ws, 5)))).toMatch(/DELETE refused/);
  });
});
