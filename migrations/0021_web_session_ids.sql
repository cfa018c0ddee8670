ALTER TABLE "web_sessions" ADD COLUMN "id" uuid DEFAULT gen_random_uuid() NOT NULL;--> statement-breakpoint
ALTER TABLE "web_sessions" ADD COLUMN "user_agent" text;--> statement-breakpoint
ALTER TABLE "web_sessions" ADD COLUMN "client_address" text;--> statement-breakpoint
CREATE UNIQUE INDEX "web_sessions_id_idx" ON "web_sessions" USING btree ("id");