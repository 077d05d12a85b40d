CREATE TABLE "current_instances" (
	"scope_key" text NOT NULL,
	"kind" text NOT NULL,
	"instance_id" text NOT NULL,
	"project_id" integer NOT NULL,
	"region_id" integer NOT NULL,
	"name" text,
	"status" text,
	"vm_state" text,
	"snapshot_running" boolean NOT NULL,
	"created_at" timestamp with time zone,
	"tags" jsonb,
	"security_group_ids" text[],
	"security_group_names" text[],
	"region" text,
	"flavor_name" text,
	"flavor_id" text,
	"cluster_id" text,
	"cluster_name" text,
	"cluster_task_status" text,
	"price_per_hour" numeric,
	"price_per_month" numeric,
	"currency_code" text,
	"owner_missing" boolean NOT NULL,
	"expires_at" timestamp with time zone,
	"off_hours_value" text,
	CONSTRAINT "current_instances_pk" PRIMARY KEY("scope_key","kind","instance_id")
);
--> statement-breakpoint
CREATE TABLE "current_instances_stamp" (
	"id" integer PRIMARY KEY NOT NULL,
	"stamp" text NOT NULL,
	"built_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "current_instances_stamp_one_row" CHECK ("current_instances_stamp"."id" = 1)
);
--> statement-breakpoint
CREATE INDEX "current_instances_price_idx" ON "current_instances" USING btree ("price_per_hour" desc nulls last,"project_id","region_id","instance_id" collate "C","kind");