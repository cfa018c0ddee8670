-- Issue 33: workspaces. Every account becomes the owner of a personal workspace with the
-- account's own id, holding all it had: the owned tables' account_id columns are renamed
-- workspace_id (same values), so no row moves and every old token still acts where it did.
CREATE TABLE "workspace_invitations" (
	"id" uuid PRIMARY KEY NOT NULL,
	"workspace_id" uuid NOT NULL,
	"role" text NOT NULL,
	"email" text,
	"token_hash" text NOT NULL,
	"invited_by" uuid,
	"expires_at" timestamp with time zone NOT NULL,
	"accepted_at" timestamp with time zone,
	"accepted_by" uuid,
	"revoked_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL
);--> statement-breakpoint
CREATE TABLE "workspace_members" (
	"workspace_id" uuid NOT NULL,
	"account_id" uuid NOT NULL,
	"role" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "workspace_members_workspace_id_account_id_pk" PRIMARY KEY("workspace_id","account_id")
);--> statement-breakpoint
CREATE TABLE "workspaces" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"personal_of" uuid,
	"plan" text DEFAULT 'free' NOT NULL,
	"credits" integer DEFAULT 0 NOT NULL,
	"use_byok" boolean DEFAULT false NOT NULL,
	"approval_mode" text DEFAULT 'auto' NOT NULL,
	"fixer" text,
	"created_at" timestamp with time zone NOT NULL,
	"deleted_at" timestamp with time zone
);--> statement-breakpoint
INSERT INTO "workspaces" ("id", "name", "personal_of", "plan", "credits", "use_byok", "approval_mode", "fixer", "created_at")
SELECT "id", coalesce(nullif("name", ''), "email"), "id", "plan", "credits", "use_byok", "approval_mode", "fixer", "created_at" FROM "accounts";--> statement-breakpoint
INSERT INTO "workspace_members" ("workspace_id", "account_id", "role", "created_at")
SELECT "id", "id", 'owner', "created_at" FROM "accounts";--> statement-breakpoint
ALTER TABLE "credit_ledger" DROP CONSTRAINT "credit_ledger_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "credit_ledger" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "provider_keys" DROP CONSTRAINT "provider_keys_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "provider_keys" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "repo_memory" DROP CONSTRAINT "repo_memory_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "repo_memory" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "repo_secrets" DROP CONSTRAINT "repo_secrets_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "repo_secrets" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "repo_settings" DROP CONSTRAINT "repo_settings_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "repo_settings" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "repo_triggers" DROP CONSTRAINT "repo_triggers_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "repo_triggers" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "scm_connections" DROP CONSTRAINT "scm_connections_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "scm_connections" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "scm_oauth_flows" DROP CONSTRAINT "scm_oauth_flows_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "scm_oauth_flows" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "task_feedback" DROP CONSTRAINT "task_feedback_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "task_feedback" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "task_post_attempts" DROP CONSTRAINT "task_post_attempts_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "task_post_attempts" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "tasks" DROP CONSTRAINT "tasks_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "tasks" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" DROP CONSTRAINT "webhook_endpoints_account_id_accounts_id_fk";--> statement-breakpoint
ALTER TABLE "webhook_endpoints" RENAME COLUMN "account_id" TO "workspace_id";--> statement-breakpoint
ALTER INDEX "credit_ledger_account_idx" RENAME TO "credit_ledger_workspace_idx";--> statement-breakpoint
ALTER INDEX "provider_keys_account_provider_idx" RENAME TO "provider_keys_workspace_provider_idx";--> statement-breakpoint
ALTER INDEX "repo_memory_account_repo_idx" RENAME TO "repo_memory_workspace_repo_idx";--> statement-breakpoint
ALTER INDEX "repo_triggers_account_idx" RENAME TO "repo_triggers_workspace_idx";--> statement-breakpoint
ALTER INDEX "scm_oauth_flows_account_idx" RENAME TO "scm_oauth_flows_workspace_idx";--> statement-breakpoint
ALTER INDEX "task_feedback_account_idx" RENAME TO "task_feedback_workspace_idx";--> statement-breakpoint
ALTER INDEX "task_post_attempts_account_at_idx" RENAME TO "task_post_attempts_workspace_at_idx";--> statement-breakpoint
ALTER INDEX "tasks_account_created_idx" RENAME TO "tasks_workspace_created_idx";--> statement-breakpoint
ALTER INDEX "tasks_account_parent_idx" RENAME TO "tasks_workspace_parent_idx";--> statement-breakpoint
ALTER INDEX "tasks_account_repo_idx" RENAME TO "tasks_workspace_repo_idx";--> statement-breakpoint
ALTER INDEX "tasks_account_status_idx" RENAME TO "tasks_workspace_status_idx";--> statement-breakpoint
ALTER INDEX "webhook_endpoints_account_idx" RENAME TO "webhook_endpoints_workspace_idx";--> statement-breakpoint
ALTER TABLE "repo_secrets" RENAME CONSTRAINT "repo_secrets_account_id_repo_name_pk" TO "repo_secrets_workspace_id_repo_name_pk";--> statement-breakpoint
ALTER TABLE "repo_settings" RENAME CONSTRAINT "repo_settings_account_id_repo_pk" TO "repo_settings_workspace_id_repo_pk";--> statement-breakpoint
ALTER TABLE "scm_connections" RENAME CONSTRAINT "scm_connections_account_id_host_pk" TO "scm_connections_workspace_id_host_pk";--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
UPDATE "api_tokens" SET "workspace_id" = "account_id";--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "workspace_id" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "api_tokens" ADD COLUMN "scopes" text[];--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "created_by" uuid;--> statement-breakpoint
UPDATE "tasks" SET "created_by" = "workspace_id";--> statement-breakpoint
ALTER TABLE "web_sessions" ADD COLUMN "workspace_id" uuid;--> statement-breakpoint
ALTER TABLE "workspace_invitations" ADD CONSTRAINT "workspace_invitations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_invitations" ADD CONSTRAINT "workspace_invitations_invited_by_accounts_id_fk" FOREIGN KEY ("invited_by") REFERENCES "public"."accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_invitations" ADD CONSTRAINT "workspace_invitations_accepted_by_accounts_id_fk" FOREIGN KEY ("accepted_by") REFERENCES "public"."accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspace_members" ADD CONSTRAINT "workspace_members_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "workspaces" ADD CONSTRAINT "workspaces_personal_of_accounts_id_fk" FOREIGN KEY ("personal_of") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "workspace_invitations_hash_idx" ON "workspace_invitations" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "workspace_invitations_workspace_idx" ON "workspace_invitations" USING btree ("workspace_id");--> statement-breakpoint
CREATE INDEX "workspace_members_account_idx" ON "workspace_members" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "workspaces_personal_of_idx" ON "workspaces" USING btree ("personal_of");--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD CONSTRAINT "credit_ledger_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "provider_keys" ADD CONSTRAINT "provider_keys_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repo_memory" ADD CONSTRAINT "repo_memory_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repo_secrets" ADD CONSTRAINT "repo_secrets_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repo_settings" ADD CONSTRAINT "repo_settings_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repo_triggers" ADD CONSTRAINT "repo_triggers_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scm_connections" ADD CONSTRAINT "scm_connections_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "scm_oauth_flows" ADD CONSTRAINT "scm_oauth_flows_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_feedback" ADD CONSTRAINT "task_feedback_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "task_post_attempts" ADD CONSTRAINT "task_post_attempts_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_created_by_accounts_id_fk" FOREIGN KEY ("created_by") REFERENCES "public"."accounts"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "web_sessions" ADD CONSTRAINT "web_sessions_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "webhook_endpoints" ADD CONSTRAINT "webhook_endpoints_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "plan";--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "credits";--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "use_byok";--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "approval_mode";--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "fixer";
