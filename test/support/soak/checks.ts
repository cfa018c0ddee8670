import type pg from 'pg';

export interface Violation {
  check: string;
  detail: string;
}

export interface Ledger {
  accounts: number;
  holds: number;
  captures: number;
  releases: number;
  grants: number;
}

/**
 * The invariants the soak proves, read from the database after the run:
 * - every task is terminal, and every failed or cancelled task says why;
 * - no step ran twice in one attempt (one claim of the task by a worker, named in the running
 *   rows of task_logs), and no step of a round finished twice (the same work done again, a second PR);
 * - every hold was settled once: holds = captures + releases per account, per task at most
 *   one hold and one settlement, and credits = grants - captures.
 */
export async function checkInvariants(pool: pg.Pool): Promise<{
  violations: Violation[];
  ledger: Ledger;
  statuses: Record<string, number>;
  reasons: { status: string; reason: string; n: number }[];
  finishedTwice: { task_id: string; step: string; round: string; workers: string[]; first_at: Date }[];
}> {
  const violations: Violation[] = [];
  const add = (check: string, rows: unknown[]) => {
    for (const r of rows.slice(0, 20)) violations.push({ check, detail: JSON.stringify(r) });
    if (rows.length > 20) violations.push({ check, detail: `… and ${rows.length - 20} more` });
  };

  const statuses = Object.fromEntries(
    (
      await pool.query<{ status: string; n: number }>('select status, count(*)::int as n from tasks group by status')
    ).rows.map((r) => [r.status, r.n]),
  );
  add(
    'task not terminal',
    (
      await pool.query(
        `select id, status, current_step, attempts from tasks where status not in ('done', 'failed', 'cancelled')`,
      )
    ).rows,
  );
  add(
    'failed or cancelled without a reason',
    (
      await pool.query(
        `select id, status from tasks where status in ('failed', 'cancelled') and coalesce(error, '') = ''`,
      )
    ).rows,
  );
  const reasons = (
    await pool.query<{ status: string; reason: string; n: number }>(
      `select status, left(regexp_replace(error, '[0-9a-f-]{36}', '<id>', 'g'), 90) as reason, count(*)::int ` +
        `as n from tasks where status in ('failed', 'cancelled') group by 1, 2 order by 3 desc`,
    )
  ).rows;
  add(
    'terminal without finished_at',
    (
      await pool.query(
        `select id, status from tasks where status in ('done', 'failed', 'cancelled') and finished_at is null`,
      )
    ).rows,
  );

  add(
    'step ran twice in one attempt',
    (
      await pool.query(
        `
        select task_id, step, input->>'round' as round, input->>'claim' as claim, min(input->>'worker') ` +
          `as worker, count(*)::int as runs
        from task_logs where status = 'running' and input ? 'claim'
        group by 1, 2, 3, 4 having count(*) > 1`,
      )
    ).rows,
  );
  // A step of a round that finished twice: done again by a later claim. Allowed only when the
  // first claim's worker was killed, or the database went away, between finishing the step and
  // saving the progress (the at-least-once window of a crash); the caller judges that.
  // Reused steps of a continued preview are copied as done rows with input.reused_from: not runs.
  const finishedTwice = (
    await pool.query<{ task_id: string; step: string; round: string; workers: string[]; first_at: Date }>(
      `
      with fin as (
        select f.id, f.task_id, f.step, f.created_at,
          (select r.input from task_logs r where r.task_id = f.task_id and r.step = f.step and r.status = ` +
        `'running' and r.id < f.id order by r.id desc limit 1) as claim
        from task_logs f where f.status in ('done', 'failed') and not (f.input ? 'reused_from'))
      select task_id, step, claim->>'round' as round, array_agg(claim->>'worker' order by id) as workers, ` +
        `min(created_at) as first_at
      from fin where claim is not null group by 1, 2, 3 having count(*) > 1`,
    )
  ).rows;
  add(
    'running step never finished although the task ended in the same attempt',
    (
      await pool.query(
        `
        select l.task_id, l.step, l.input->>'attempt' as attempt from task_logs l join tasks t on t.id = ` +
          `l.task_id
        where l.status = 'running' and t.status = 'done'
          and not exists (select 1 from task_logs f where f.task_id = l.task_id and f.step = l.step and ` +
          `f.id > l.id and f.status in ('done', 'failed'))`,
      )
    ).rows,
  );

  const perAccount = (
    await pool.query<{
      account_id: string;
      credits: number;
      grants: number;
      holds: number;
      captures: number;
      releases: number;
    }>(`
      select a.id as account_id, a.credits,
        coalesce(sum(l.amount) filter (where l.kind = 'grant'), 0)::int as grants,
        coalesce(sum(l.amount) filter (where l.kind = 'hold'), 0)::int as holds,
        coalesce(sum(l.amount) filter (where l.kind = 'capture'), 0)::int as captures,
        coalesce(sum(l.amount) filter (where l.kind = 'release'), 0)::int as releases
      from workspaces a left join credit_ledger l on l.workspace_id = a.id group by a.id`)
  ).rows;
  add(
    'holds ≠ captures + releases',
    perAccount.filter((a) => a.holds !== a.captures + a.releases),
  );
  add(
    'credits ≠ grants − captures',
    perAccount.filter((a) => a.credits !== a.grants - a.captures),
  );
  add(
    'a task held or settled more than once',
    (
      await pool.query(
        `
        select task_id, count(*) filter (where kind = 'hold')::int as holds, count(*) filter (where kind ` +
          `in ('capture', 'release'))::int as settlements
        from credit_ledger where task_id is not null group by task_id
        having count(*) filter (where kind = 'hold') > 1 or count(*) filter (where kind in ('capture', ` +
          `'release')) <> count(*) filter (where kind = 'hold')`,
      )
    ).rows,
  );
  add(
    'a done task whose credit was released, or a failed one captured',
    (
      await pool.query(`
      select t.id, t.status, l.kind from tasks t join credit_ledger l on l.task_id = t.id
      where (t.status = 'done' and l.kind = 'release') or (t.status <> 'done' and l.kind = 'capture')`)
    ).rows,
  );
  add(
    'credit still held by a finished task',
    (await pool.query(`select id, status from tasks where credit_held and status in ('done', 'failed', 'cancelled')`))
      .rows,
  );

  const sum = (k: keyof Ledger) => perAccount.reduce((a, r) => a + Number(r[k as keyof typeof r]), 0);
  return {
    violations,
    statuses,
    reasons,
    finishedTwice,
    ledger: {
      accounts: perAccount.length,
      holds: sum('holds'),
      captures: sum('captures'),
      releases: sum('releases'),
      grants: sum('grants'),
    },
  };
}
