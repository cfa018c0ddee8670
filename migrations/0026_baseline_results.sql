CREATE TABLE "baseline_results" (
	"key" text PRIMARY KEY NOT NULL,
	"workspace_id" uuid NOT NULL,
	"repository" text NOT NULL,
	"base_commit" text NOT NULL,
	"env_key" text NOT NULL,
	"command" text NOT NULL,
	"test_files_digest" text,
	"result" jsonb NOT NULL,
	"bytes" integer NOT NULL,
	"hits" integer DEFAULT 0 NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "baseline_results_used_idx" ON "baseline_results" USING btree ("used_at");--> statement-breakpoint
CREATE INDEX "baseline_results_workspace_idx" ON "baseline_results" USING btree ("workspace_id","repository");