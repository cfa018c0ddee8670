CREATE TABLE "repo_triggers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"host" text NOT NULL,
	"repo" text NOT NULL,
	"repo_owner" text NOT NULL,
	"repo_name" text NOT NULL,
	"hook_id" text NOT NULL,
	"secret_enc" text NOT NULL,
	"mention" text NOT NULL,
	"label" text NOT NULL,
	"events" jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "trigger_deliveries" (
	"id" uuid PRIMARY KEY NOT NULL,
	"trigger_id" uuid NOT NULL,
	"delivery_id" text NOT NULL,
	"event" text NOT NULL,
	"event_key" text,
	"status" text NOT NULL,
	"reason" text,
	"task_id" uuid,
	"payload" jsonb,
	"received_at" timestamp with time zone NOT NULL,
	"done_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "trigger" jsonb;--> statement-breakpoint
ALTER TABLE "repo_triggers" ADD CONSTRAINT "repo_triggers_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "trigger_deliveries" ADD CONSTRAINT "trigger_deliveries_trigger_id_repo_triggers_id_fk" FOREIGN KEY ("trigger_id") REFERENCES "public"."repo_triggers"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "repo_triggers_repo_idx" ON "repo_triggers" USING btree ("repo");--> statement-breakpoint
CREATE INDEX "repo_triggers_account_idx" ON "repo_triggers" USING btree ("account_id");--> statement-breakpoint
CREATE UNIQUE INDEX "trigger_deliveries_delivery_idx" ON "trigger_deliveries" USING btree ("trigger_id","delivery_id");--> statement-breakpoint
CREATE UNIQUE INDEX "trigger_deliveries_event_idx" ON "trigger_deliveries" USING btree ("trigger_id","event_key");