CREATE TABLE "repo_memory" (
	"id" uuid PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"repo" text NOT NULL,
	"kind" text NOT NULL,
	"content" jsonb NOT NULL,
	"task_id" uuid,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "repo_memory" ADD CONSTRAINT "repo_memory_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "repo_memory_account_repo_idx" ON "repo_memory" USING btree ("account_id","repo","created_at");