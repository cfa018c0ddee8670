CREATE TABLE "ci_rounds" (
	"id" uuid PRIMARY KEY NOT NULL,
	"trigger_id" uuid NOT NULL,
	"pull_number" integer NOT NULL,
	"sha" text NOT NULL,
	"kind" text NOT NULL,
	"outcome" text NOT NULL,
	"jobs" jsonb NOT NULL,
	"task_id" uuid,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "repo_triggers" ADD COLUMN "ci_rounds" integer DEFAULT 2 NOT NULL;--> statement-breakpoint
ALTER TABLE "ci_rounds" ADD CONSTRAINT "ci_rounds_trigger_id_repo_triggers_id_fk" FOREIGN KEY ("trigger_id") REFERENCES "public"."repo_triggers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "ci_rounds_auto_idx" ON "ci_rounds" USING btree ("trigger_id","pull_number","sha") WHERE "ci_rounds"."kind" = 'auto';--> statement-breakpoint
CREATE INDEX "ci_rounds_pull_idx" ON "ci_rounds" USING btree ("trigger_id","pull_number");