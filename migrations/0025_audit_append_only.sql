-- The audit log is append-only in the database itself (docs/security.md, "The audit log"): an
-- UPDATE, DELETE or TRUNCATE of audit_events raises, whichever code path or SQL session issued it.
-- The one exception is retention's fold (src/audit/retention.ts): it deletes the rows its summary
-- row stands for, in a transaction it marks with set_config('emend.audit_fold', 'on', true) (SET
-- LOCAL: the mark ends with that transaction). Only a DELETE is let through that way; an UPDATE
-- never is. The hash chain (`emend audit verify`) still finds what someone allowed to drop this
-- trigger changed.
CREATE OR REPLACE FUNCTION emend_audit_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('emend.audit_fold', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_events is append-only: % refused (only the retention fold deletes rows)', TG_OP
    USING ERRCODE = 'restrict_violation';
END
$$;
--> statement-breakpoint
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION emend_audit_append_only();
--> statement-breakpoint
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
  FOR EACH STATEMENT EXECUTE FUNCTION emend_audit_append_only();
