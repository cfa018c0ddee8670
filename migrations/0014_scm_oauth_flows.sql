CREATE TABLE "scm_oauth_flows" (
	"id" text PRIMARY KEY NOT NULL,
	"account_id" uuid NOT NULL,
	"host" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone,
	"code_enc" text,
	"confirm_hash" text,
	"attempts" integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "scm_oauth_flows" ADD CONSTRAINT "scm_oauth_flows_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "scm_oauth_flows_account_idx" ON "scm_oauth_flows" USING btree ("account_id");