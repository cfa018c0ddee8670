-- The task state machine, enforced by the database itself: an update that moves a task
-- along an edge not in this table raises, whichever code path issued it. The same table
-- is in src/tasks/states.ts; test/engine/transitions.test.ts checks that they agree.
CREATE OR REPLACE FUNCTION emend_task_transition_allowed(old_status text, new_status text) RETURNS boolean
LANGUAGE sql IMMUTABLE AS $$
  SELECT old_status = new_status OR (old_status, new_status) IN (
    ('pending', 'running'), ('pending', 'failed'), ('pending', 'cancelled'),
    ('running', 'awaiting_plan'), ('running', 'awaiting_diff'), ('running', 'done'), ('running', 'failed'), ('running', 'cancelled'),
    ('awaiting_plan', 'running'), ('awaiting_plan', 'cancelled'),
    ('awaiting_diff', 'running'), ('awaiting_diff', 'cancelled')
  )
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION emend_check_task_transition() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NOT emend_task_transition_allowed(OLD.status, NEW.status) THEN
    RAISE EXCEPTION 'illegal task transition % -> % for task %', OLD.status, NEW.status, OLD.id
      USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;
--> statement-breakpoint
CREATE TRIGGER tasks_status_transition BEFORE UPDATE OF status ON tasks
  FOR EACH ROW EXECUTE FUNCTION emend_check_task_transition();
--> statement-breakpoint
ALTER TABLE tasks ADD CONSTRAINT tasks_status_known
  CHECK (status IN ('pending', 'running', 'awaiting_plan', 'awaiting_diff', 'done', 'failed', 'cancelled'));
