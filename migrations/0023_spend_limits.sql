CREATE TABLE "model_spend" (
	"id" uuid PRIMARY KEY NOT NULL,
	"workspace_id" uuid NOT NULL,
	"account_id" uuid,
	"task_id" uuid,
	"usd" numeric(12, 6) NOT NULL,
	"created_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "spend_notices" (
	"workspace_id" uuid NOT NULL,
	"month" text NOT NULL,
	"subject" text NOT NULL,
	"cap" text NOT NULL,
	"threshold" integer NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "spend_notices_workspace_id_month_subject_cap_threshold_pk" PRIMARY KEY("workspace_id","month","subject","cap","threshold")
);
--> statement-breakpoint
ALTER TABLE "credit_ledger" ADD COLUMN "account_id" uuid;--> statement-breakpoint
ALTER TABLE "workspace_members" ADD COLUMN "monthly_spend_cap_usd" numeric(12, 2);--> statement-breakpoint
ALTER TABLE "workspace_members" ADD COLUMN "monthly_credit_cap" integer;--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "monthly_spend_cap_usd" numeric(12, 2);--> statement-breakpoint
ALTER TABLE "workspaces" ADD COLUMN "monthly_credit_cap" integer;--> statement-breakpoint
ALTER TABLE "model_spend" ADD CONSTRAINT "model_spend_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "spend_notices" ADD CONSTRAINT "spend_notices_workspace_id_workspaces_id_fk" FOREIGN KEY ("workspace_id") REFERENCES "public"."workspaces"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "model_spend_workspace_idx" ON "model_spend" USING btree ("workspace_id","created_at");