CREATE TABLE "repo_secrets" (
	"account_id" uuid NOT NULL,
	"repo" text NOT NULL,
	"name" text NOT NULL,
	"value_enc" text NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "repo_secrets_account_id_repo_name_pk" PRIMARY KEY("account_id","repo","name")
);
--> statement-breakpoint
CREATE TABLE "repo_settings" (
	"account_id" uuid NOT NULL,
	"repo" text NOT NULL,
	"setup_command" text,
	"test_command" text,
	"env" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"updated_at" timestamp with time zone NOT NULL,
	CONSTRAINT "repo_settings_account_id_repo_pk" PRIMARY KEY("account_id","repo")
);
--> statement-breakpoint
ALTER TABLE "repo_secrets" ADD CONSTRAINT "repo_secrets_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "repo_settings" ADD CONSTRAINT "repo_settings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;