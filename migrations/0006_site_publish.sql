CREATE TABLE "site_screenshots" (
	"task_id" uuid NOT NULL,
	"name" text NOT NULL,
	"png" "bytea" NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	CONSTRAINT "site_screenshots_task_id_name_pk" PRIMARY KEY("task_id","name")
);
--> statement-breakpoint
ALTER TABLE "site_screenshots" ADD CONSTRAINT "site_screenshots_task_id_tasks_id_fk" FOREIGN KEY ("task_id") REFERENCES "public"."tasks"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "tasks_site_slug_idx" ON "tasks" USING btree ("site_slug");