DROP INDEX "tasks_account_created_idx";--> statement-breakpoint
CREATE INDEX "tasks_account_parent_idx" ON "tasks" USING btree ("account_id","parent_id");--> statement-breakpoint
CREATE INDEX "tasks_account_created_idx" ON "tasks" USING btree ("account_id","created_at","id");