CREATE TABLE "cost_partition_keys" (
	"key" text PRIMARY KEY NOT NULL,
	"recorded_at" timestamp with time zone DEFAULT now() NOT NULL,
	"complete_from" timestamp with time zone
);
