ALTER TABLE "accounts" ADD COLUMN "fixer" text;--> statement-breakpoint
ALTER TABLE "tasks" ADD COLUMN "fixer" text DEFAULT 'pipeline' NOT NULL;