import { and, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/audit/record.js';
import type { Database } from '../../src/db/client.js';
import { auditEvents } from '../../src/db/schema.js';
import { newId } from '../../src/ids.js';
import { tamperWithAudit } from '../support/audit-db.js';
import { openTestDatabase, postgresUrlOf } from '../support/test-db.js';
import { cliEnv, killAll, newDataDir, removeDataDirs, runCli } from './cli-process.js';

// `emend audit verify`: the chains checked from the command line, the first broken link named and
// a non-zero exit, for a row edited with SQL and for one deleted; `emend audit fold` then verify.
describe('emend audit verify', { timeout: 120_000 }, () => {
  let database: Database;
  let env: NodeJS.ProcessEnv;
  const clock = { now: () => new Date('2026-11-01T10:00:00Z') };
  const actor = {
    accountId: newId(),
    tokenId: newId(),
    sessionId: null,
    role: 'owner',
    requestId: 'req-1',
    clientAddress: '203.0.113.9',
    userAgent: 'cli-test',
  };

  beforeAll(async () => {
    database = await openTestDatabase();
    env = cliEnv({ DATABASE_URL: postgresUrlOf(database), EMEND_DATA_DIR: newDataDir() });
  });
  afterAll(async () => {
    await killAll();
    await database.close();
    removeDataDirs();
  });

  async function chain(rows: number, at = clock) {
    const workspaceId = newId();
    for (let i = 0; i < rows; i++)
      await database.db.transaction((tx) =>
        recordAudit(tx, { clock: at }, { workspaceId, action: 'token.minted', actor, targets: { token_id: newId() } }),
      );
    return workspaceId;
  }

  it('exits 0 on intact chains, 1 naming the first broken link of an edited or removed row', async () => {
    const a = await chain(3);
    const b = await chain(4);
    const ok = await runCli(['audit', 'verify'], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, workspaces: 2, rows: 7, broken: [] });

    // Past the table's append-only trigger, as someone who may alter the table could.
    await tamperWithAudit(database.db, (tx) =>
      tx
        .update(auditEvents)
        .set({ actorRole: 'viewer' })
        .where(and(eq(auditEvents.workspaceId, a), eq(auditEvents.seq, 2))),
    );
    const edited = await runCli(['audit', 'verify'], env);
    expect(edited.code).toBe(1);
    expect(edited.stderr).toContain(`workspace ${a}, row 2: its contents do not match its hash (edited)`);
    expect(JSON.parse(edited.stdout)).toMatchObject({ ok: false, broken: [{ workspaceId: a, seq: 2 }] });

    await tamperWithAudit(database.db, (tx) =>
      tx.delete(auditEvents).where(and(eq(auditEvents.workspaceId, b), eq(auditEvents.seq, 3))),
    );
    const removed = await runCli(['audit', 'verify', '--workspace', b], env);
    expect(removed.code).toBe(1);
    expect(removed.stderr).toContain(`workspace ${b}, row 4: row 3 is missing`);
    expect(JSON.parse(removed.stdout)).toMatchObject({ workspaces: 1, rows: 3 });

    // The first row gone is found too: the chain no longer starts at 1 and no summary says why.
    await tamperWithAudit(database.db, (tx) =>
      tx.delete(auditEvents).where(and(eq(auditEvents.workspaceId, b), eq(auditEvents.seq, 1))),
    );
    expect((await runCli(['audit', 'verify', '--workspace', b], env)).stderr).toContain(`workspace ${b}, row 2:`);
    const bad = await runCli(['audit', 'verify', '--workspace', 'nope'], env);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('--workspace');
  });

  it('`emend audit fold` gets past the append-only table, and the folded chain still verifies', async () => {
    // Rows from years ago: past any retention on the real clock the command reads.
    const old = await chain(3, { now: () => new Date('2020-01-01T00:00:00Z') });
    const folded = await runCli(['audit', 'fold'], { ...env, EMEND_AUDIT_RETENTION_DAYS: '30' });
    expect(folded.code, folded.stderr).toBe(0);
    expect(JSON.parse(folded.stdout).folded).toBeGreaterThanOrEqual(3);
    const rows = await database.db.select().from(auditEvents).where(eq(auditEvents.workspaceId, old));
    expect(rows.map((r) => [r.seq, r.kind])).toEqual([[4, 'summary']]);
    const ok = await runCli(['audit', 'verify', '--workspace', old], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ ok: true, workspaces: 1, rows: 1, broken: [] });
  });
});
