CREATE TABLE "audit_events" (
	"workspace_id" uuid NOT NULL,
	"seq" bigint NOT NULL,
	"at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"action" text NOT NULL,
	"decision" text NOT NULL,
	"actor_account_id" uuid,
	"actor_token_id" uuid,
	"actor_session_id" uuid,
	"actor_role" text,
	"targets" jsonb NOT NULL,
	"request_id" text,
	"client_address" text,
	"user_agent" text,
	"detail" jsonb NOT NULL,
	"prev_hash" text NOT NULL,
	"hash" text NOT NULL,
	CONSTRAINT "audit_events_workspace_id_seq_pk" PRIMARY KEY("workspace_id","seq")
);
--> statement-breakpoint
CREATE INDEX "audit_events_workspace_at_idx" ON "audit_events" USING btree ("workspace_id","at");