CREATE TABLE "scm_connections" (
	"account_id" uuid NOT NULL,
	"host" text NOT NULL,
	"login" text NOT NULL,
	"token_enc" text NOT NULL,
	"refresh_enc" text,
	"expires_at" timestamp with time zone,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "scm_connections_account_id_host_pk" PRIMARY KEY("account_id","host")
);
--> statement-breakpoint
ALTER TABLE "scm_connections" ADD CONSTRAINT "scm_connections_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "scm_connections_login_idx" ON "scm_connections" USING btree ("host",lower("login"));--> statement-breakpoint
-- Connections made when the deployment had one GitHub host keep working: that host's id is `github`.
INSERT INTO "scm_connections" ("account_id", "host", "login", "token_enc", "created_at")
  SELECT "id", 'github', "scm_login", "scm_token_enc", now() FROM "accounts"
  WHERE "scm_login" IS NOT NULL AND "scm_token_enc" IS NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "scm_login";--> statement-breakpoint
ALTER TABLE "accounts" DROP COLUMN "scm_token_enc";