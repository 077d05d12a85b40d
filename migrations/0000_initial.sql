CREATE TABLE "audit_log" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "audit_log_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"at" timestamp with time zone DEFAULT now() NOT NULL,
	"actor" text NOT NULL,
	"role" text NOT NULL,
	"action" text NOT NULL,
	"instance_id" text,
	"project_id" integer,
	"region_id" integer,
	"reason" text,
	"dry_run" boolean DEFAULT false NOT NULL,
	"result" text NOT NULL,
	"error" text,
	"task_ids" jsonb DEFAULT '[]'::jsonb NOT NULL
);
--> statement-breakpoint
CREATE TABLE "collection_runs" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "collection_runs_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"trigger" text NOT NULL,
	"collectors" text[] NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone,
	"heartbeat_at" timestamp with time zone DEFAULT now() NOT NULL,
	"status" text DEFAULT 'running' NOT NULL,
	"counts" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"errors" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"runner_id" text NOT NULL,
	CONSTRAINT "collection_runs_trigger_check" CHECK ("collection_runs"."trigger" in ('schedule', 'manual', 'startup')),
	CONSTRAINT "collection_runs_status_check" CHECK ("collection_runs"."status" in ('running', 'succeeded', 'partial', 'failed'))
);
--> statement-breakpoint
CREATE TABLE "cost_daily" (
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"scope_key" text NOT NULL,
	"project_id" integer,
	"region_id" integer,
	"dimension" text NOT NULL,
	"group_value" text NOT NULL,
	"currency" text,
	"cost" numeric DEFAULT '0' NOT NULL,
	"resource_hours" numeric DEFAULT '0' NOT NULL,
	"unpriced_resource_hours" numeric DEFAULT '0' NOT NULL,
	"max_resource_count" integer DEFAULT 0 NOT NULL,
	"computed_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "cost_daily_group_uq" UNIQUE NULLS NOT DISTINCT("day","dimension","group_value","currency","kind","scope_key")
);
--> statement-breakpoint
CREATE TABLE "cost_rollups" (
	"snapshot_id" integer NOT NULL,
	"taken_at" timestamp with time zone NOT NULL,
	"kind" text NOT NULL,
	"scope_key" text NOT NULL,
	"project_id" integer,
	"region_id" integer,
	"dimension" text NOT NULL,
	"group_value" text NOT NULL,
	"currency" text,
	"price_per_hour" numeric DEFAULT '0' NOT NULL,
	"price_per_month" numeric DEFAULT '0' NOT NULL,
	"resource_count" integer DEFAULT 0 NOT NULL,
	"unpriced_count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "cost_rollups_group_uq" UNIQUE NULLS NOT DISTINCT("snapshot_id","dimension","group_value","currency")
);
--> statement-breakpoint
CREATE TABLE "free_features" (
	"snapshot_id" integer NOT NULL,
	"activation_id" bigint NOT NULL,
	"client_id" bigint,
	"feature_id" bigint,
	"feature_name" text,
	"feature_service" text,
	"is_free" boolean,
	"created_at" timestamp with time zone,
	"raw" jsonb NOT NULL,
	CONSTRAINT "free_features_pk" PRIMARY KEY("snapshot_id","activation_id")
);
--> statement-breakpoint
CREATE TABLE "gpu_cluster_servers" (
	"snapshot_id" integer NOT NULL,
	"cluster_id" text NOT NULL,
	"server_id" text NOT NULL,
	"name" text,
	"status" text,
	"vm_state" text,
	"flavor_id" text,
	"flavor_name" text,
	"resource_class" text,
	"project_id" integer,
	"region_id" integer,
	"region" text,
	"created_at" timestamp with time zone,
	"ssh_key_name" text,
	"tags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags_read_only" text[] DEFAULT '{}'::text[] NOT NULL,
	"tags_original" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"raw" jsonb NOT NULL,
	CONSTRAINT "gpu_cluster_servers_pk" PRIMARY KEY("snapshot_id","cluster_id","server_id")
);
--> statement-breakpoint
CREATE TABLE "gpu_clusters" (
	"snapshot_id" integer NOT NULL,
	"cluster_id" text NOT NULL,
	"cluster_name" text,
	"cluster_status" text,
	"task_status" text,
	"flavor_name" text,
	"image_id" text,
	"image_name" text,
	"project_id" integer,
	"region_id" integer,
	"region" text,
	"created_at" timestamp with time zone,
	"ssh_key_name" text,
	"server_count" integer DEFAULT 0 NOT NULL,
	"tags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags_read_only" text[] DEFAULT '{}'::text[] NOT NULL,
	"tags_original" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"raw" jsonb NOT NULL,
	CONSTRAINT "gpu_clusters_pk" PRIMARY KEY("snapshot_id","cluster_id")
);
--> statement-breakpoint
CREATE TABLE "gpu_flavors" (
	"snapshot_id" integer NOT NULL,
	"flavor_id" text NOT NULL,
	"flavor_name" text,
	"disabled" boolean DEFAULT false NOT NULL,
	"capacity" integer,
	"currency_code" text,
	"price_per_hour" numeric,
	"price_per_month" numeric,
	"price_status" text,
	"resource_class" text,
	"hardware" jsonb,
	"project_id" integer,
	"region_id" integer,
	"raw" jsonb NOT NULL,
	CONSTRAINT "gpu_flavors_pk" PRIMARY KEY("snapshot_id","flavor_id")
);
--> statement-breakpoint
CREATE TABLE "image_tags" (
	"snapshot_id" integer NOT NULL,
	"image_id" text NOT NULL,
	"key" text NOT NULL,
	"value" text,
	"read_only" boolean DEFAULT false NOT NULL,
	"project_id" integer,
	"region_id" integer,
	"raw" jsonb NOT NULL,
	CONSTRAINT "image_tags_pk" PRIMARY KEY("snapshot_id","image_id","key")
);
--> statement-breakpoint
CREATE TABLE "instance_ports" (
	"snapshot_id" integer NOT NULL,
	"instance_id" text NOT NULL,
	"port_id" text NOT NULL,
	"name" text,
	"security_groups" jsonb,
	"project_id" integer,
	"region_id" integer,
	"raw" jsonb NOT NULL,
	CONSTRAINT "instance_ports_pk" PRIMARY KEY("snapshot_id","instance_id","port_id")
);
--> statement-breakpoint
CREATE TABLE "instances" (
	"snapshot_id" integer NOT NULL,
	"instance_id" text NOT NULL,
	"name" text,
	"description" text,
	"status" text,
	"vm_state" text,
	"task_state" text,
	"flavor_id" text,
	"flavor_name" text,
	"vcpus" integer,
	"ram" integer,
	"project_id" integer,
	"region_id" integer,
	"region" text,
	"created_at" timestamp with time zone,
	"ssh_key_name" text,
	"security_group_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"security_group_names" text[] DEFAULT '{}'::text[] NOT NULL,
	"volume_count" integer,
	"tags" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"tags_read_only" text[] DEFAULT '{}'::text[] NOT NULL,
	"tags_original" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"raw" jsonb NOT NULL,
	CONSTRAINT "instances_pk" PRIMARY KEY("snapshot_id","instance_id")
);
--> statement-breakpoint
CREATE TABLE "k8s_cluster_prices" (
	"snapshot_id" integer NOT NULL,
	"cluster_name" text NOT NULL,
	"currency_code" text,
	"price_per_hour" numeric,
	"price_per_month" numeric,
	"price_without_discount_per_month" numeric,
	"discount_percent" numeric,
	"tax_percent" numeric,
	"price_status" text,
	"breakdown" jsonb,
	"project_id" integer,
	"region_id" integer,
	"raw" jsonb NOT NULL,
	CONSTRAINT "k8s_cluster_prices_pk" PRIMARY KEY("snapshot_id","cluster_name")
);
--> statement-breakpoint
CREATE TABLE "keypairs" (
	"snapshot_id" integer NOT NULL,
	"keypair_id" text NOT NULL,
	"name" text,
	"fingerprint" text,
	"state" text,
	"shared_in_project" boolean,
	"project_id" integer,
	"region_id" integer,
	"created_at" timestamp with time zone,
	"raw" jsonb NOT NULL,
	CONSTRAINT "keypairs_pk" PRIMARY KEY("snapshot_id","keypair_id")
);
--> statement-breakpoint
CREATE TABLE "resource_presence" (
	"kind" text NOT NULL,
	"scope_key" text NOT NULL,
	"resource_id" text NOT NULL,
	"name" text,
	"first_seen_at" timestamp with time zone NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL,
	"gone_at" timestamp with time zone,
	"first_snapshot_id" integer,
	"last_snapshot_id" integer,
	CONSTRAINT "resource_presence_pk" PRIMARY KEY("kind","scope_key","resource_id")
);
--> statement-breakpoint
CREATE TABLE "snapshots" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "snapshots_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"run_id" integer,
	"kind" text NOT NULL,
	"scope_key" text NOT NULL,
	"project_id" integer,
	"region_id" integer,
	"taken_at" timestamp with time zone DEFAULT now() NOT NULL,
	"complete" boolean DEFAULT false NOT NULL,
	"row_count" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "snapshots_kind_check" CHECK ("snapshots"."kind" in ('cluster', 'instance', 'port', 'keypair', 'flavor', 'k8s_price', 'storage_key', 'image_tag', 'free_feature'))
);
--> statement-breakpoint
CREATE TABLE "storage_ssh_keys" (
	"snapshot_id" integer NOT NULL,
	"key_id" bigint NOT NULL,
	"name" text,
	"created_at" timestamp with time zone,
	"raw" jsonb NOT NULL,
	CONSTRAINT "storage_ssh_keys_pk" PRIMARY KEY("snapshot_id","key_id")
);
--> statement-breakpoint
ALTER TABLE "cost_rollups" ADD CONSTRAINT "cost_rollups_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "free_features" ADD CONSTRAINT "free_features_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers" ADD CONSTRAINT "gpu_cluster_servers_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "gpu_clusters" ADD CONSTRAINT "gpu_clusters_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "gpu_flavors" ADD CONSTRAINT "gpu_flavors_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "image_tags" ADD CONSTRAINT "image_tags_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instance_ports" ADD CONSTRAINT "instance_ports_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instances" ADD CONSTRAINT "instances_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices" ADD CONSTRAINT "k8s_cluster_prices_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "keypairs" ADD CONSTRAINT "keypairs_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "snapshots" ADD CONSTRAINT "snapshots_run_id_collection_runs_id_fk" FOREIGN KEY ("run_id") REFERENCES "public"."collection_runs"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_ssh_keys" ADD CONSTRAINT "storage_ssh_keys_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "audit_log_at_idx" ON "audit_log" USING btree ("at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "audit_log_instance_idx" ON "audit_log" USING btree ("instance_id");--> statement-breakpoint
CREATE INDEX "collection_runs_started_at_idx" ON "collection_runs" USING btree ("started_at" DESC NULLS FIRST);--> statement-breakpoint
CREATE INDEX "collection_runs_running_idx" ON "collection_runs" USING btree ("heartbeat_at") WHERE "collection_runs"."status" = 'running';--> statement-breakpoint
CREATE INDEX "cost_daily_dimension_day_idx" ON "cost_daily" USING btree ("dimension","day");--> statement-breakpoint
CREATE INDEX "cost_rollups_dimension_time_idx" ON "cost_rollups" USING btree ("dimension","taken_at");--> statement-breakpoint
CREATE INDEX "gpu_cluster_servers_tags_idx" ON "gpu_cluster_servers" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "gpu_clusters_tags_idx" ON "gpu_clusters" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "instances_tags_idx" ON "instances" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "resource_presence_gone_idx" ON "resource_presence" USING btree ("kind","gone_at") WHERE "resource_presence"."gone_at" is not null;--> statement-breakpoint
CREATE INDEX "snapshots_latest_complete_idx" ON "snapshots" USING btree ("kind","scope_key","taken_at" DESC NULLS FIRST) WHERE "snapshots"."complete";--> statement-breakpoint
CREATE INDEX "snapshots_taken_at_idx" ON "snapshots" USING btree ("taken_at");--> statement-breakpoint
CREATE UNIQUE INDEX "snapshots_run_kind_scope_uq" ON "snapshots" USING btree ("run_id","kind","scope_key");