ALTER TABLE "repo_settings" ADD COLUMN "attempts" integer;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "fix_attempts" integer DEFAULT 1 NOT NULL;