import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { Db, Tx } from '../../src/db/client.js';

// The audit log's table as tests reach it beside the service: making one action's insert fail (to
// show an act and its row commit together), and editing rows past the append-only trigger (to
// show the hash chain still finds it).

/**
 * Makes the database refuse the audit row of `action` (a trigger on audit_events that raises, as a
 * full disk or a broken constraint would), until the returned function drops it. Only that action:
 * the test's other acts go on being recorded.
 */
export async function failAuditOf(db: Db, action: string): Promise<() => Promise<void>> {
  // DDL takes no parameters: the action is one of the test's own names, checked to be only that.
  if (!/^[a-z_]+(\.[a-z_]+)*$/.test(action)) throw new Error(`not an audit action: ${action}`);
  const name = `test_audit_refuses_${randomBytes(4).toString('hex')}`;
  await db.execute(
    sql.raw(
      `create function ${name}() returns trigger language plpgsql as $$ begin ` +
        `raise exception 'the test refuses the audit row of ${action}'; end $$`,
    ),
  );
  await db.execute(
    sql.raw(
      `create trigger ${name} before insert on audit_events for each row ` +
        `when (new.action = '${action}') execute function ${name}()`,
    ),
  );
  return async () => {
    await db.execute(sql.raw(`drop trigger ${name} on audit_events`));
    await db.execute(sql.raw(`drop function ${name}()`));
  };
}

/**
 * Runs `edit` with audit_events' append-only trigger switched off, in one transaction that switches
 * it back on before it commits: what someone allowed to alter the table could do to it. The hash
 * chain is what finds that.
 */
export async function tamperWithAudit(db: Db, edit: (tx: Tx) => Promise<unknown>): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(sql`alter table audit_events disable trigger audit_events_append_only`);
    await edit(tx);
    await tx.execute(sql`alter table audit_events enable trigger audit_events_append_only`);
  });
}
