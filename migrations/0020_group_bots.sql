CREATE TABLE "scm_group_bots" (
	"id" uuid PRIMARY KEY NOT NULL,
	"workspace_id" uuid NOT NULL,
	"host" text NOT NULL,
	"group_path" text NOT NULL,
	"group_id" text NOT NULL,
	"bot_login" text NOT NULL,
	"bot_name" text NOT NULL,
	"bot_email" text NOT NULL,
	"token_enc" text NOT NULL,
	"hook_id" text NOT NULL,
	"secret_enc" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "scm_group_bots" ADD CONSTRAINT "scm_group_bots_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "scm_group_bots_group_idx" ON "scm_group_bots" USING btree ("host",lower("group_path"));--> statement-breakpoint
CREATE INDEX "scm_group_bots_workspace_idx" ON "scm_group_bots" USING btree ("workspace_id");