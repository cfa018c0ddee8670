CREATE TABLE "scm_installations" (
	"host" text NOT NULL,
	"installation_id" text NOT NULL,
	"account" text NOT NULL,
	"account_type" text NOT NULL,
	"workspace_id" uuid,
	"claimed_by" uuid,
	"claimed_as" text,
	"claimed_at" timestamp with time zone,
	"suspended_at" timestamp with time zone,
	"removed_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "scm_installations_host_installation_id_pk" PRIMARY KEY("host","installation_id")
);
--> statement-breakpoint
ALTER TABLE "repo_triggers" ALTER COLUMN "hook_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "scm_installations" ADD CONSTRAINT "scm_installations_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "scm_installations_account_idx" ON "scm_installations" USING btree ("host",lower("account"));--> statement-breakpoint
CREATE INDEX "scm_installations_workspace_idx" ON "scm_installations" USING btree ("workspace_id");