CREATE TABLE "free_features_versions" (
	"scope_key" text NOT NULL,
	"activation_id" bigint NOT NULL,
	"client_id" bigint,
	"feature_id" bigint,
	"feature_name" text,
	"feature_service" text,
	"is_free" boolean,
	"created_at" timestamp with time zone,
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "free_features_versions_pk" PRIMARY KEY("scope_key","activation_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "gpu_cluster_servers_versions" (
	"scope_key" text NOT NULL,
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
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "gpu_cluster_servers_versions_pk" PRIMARY KEY("scope_key","cluster_id","server_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "gpu_clusters_versions" (
	"scope_key" text NOT NULL,
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
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "gpu_clusters_versions_pk" PRIMARY KEY("scope_key","cluster_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "gpu_flavors_versions" (
	"scope_key" text NOT NULL,
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
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "gpu_flavors_versions_pk" PRIMARY KEY("scope_key","flavor_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "image_tags_versions" (
	"scope_key" text NOT NULL,
	"image_id" text NOT NULL,
	"key" text NOT NULL,
	"value" text,
	"read_only" boolean DEFAULT false NOT NULL,
	"project_id" integer,
	"region_id" integer,
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "image_tags_versions_pk" PRIMARY KEY("scope_key","image_id","key","valid_from")
);
--> statement-breakpoint
CREATE TABLE "instance_ports_versions" (
	"scope_key" text NOT NULL,
	"instance_id" text NOT NULL,
	"port_id" text NOT NULL,
	"name" text,
	"security_groups" jsonb,
	"project_id" integer,
	"region_id" integer,
	"raw" json NOT NULL,
	"read_at" timestamp with time zone,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "instance_ports_versions_pk" PRIMARY KEY("scope_key","instance_id","port_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "instances_versions" (
	"scope_key" text NOT NULL,
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
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "instances_versions_pk" PRIMARY KEY("scope_key","instance_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "k8s_cluster_prices_versions" (
	"scope_key" text NOT NULL,
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
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "k8s_cluster_prices_versions_pk" PRIMARY KEY("scope_key","cluster_name","valid_from")
);
--> statement-breakpoint
CREATE TABLE "keypairs_versions" (
	"scope_key" text NOT NULL,
	"keypair_id" text NOT NULL,
	"name" text,
	"fingerprint" text,
	"state" text,
	"shared_in_project" boolean,
	"project_id" integer,
	"region_id" integer,
	"created_at" timestamp with time zone,
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "keypairs_versions_pk" PRIMARY KEY("scope_key","keypair_id","valid_from")
);
--> statement-breakpoint
CREATE TABLE "storage_ssh_keys_versions" (
	"scope_key" text NOT NULL,
	"key_id" bigint NOT NULL,
	"name" text,
	"created_at" timestamp with time zone,
	"raw" json NOT NULL,
	"hash" uuid NOT NULL,
	"valid_from" timestamp with time zone NOT NULL,
	"valid_to" timestamp with time zone,
	CONSTRAINT "storage_ssh_keys_versions_pk" PRIMARY KEY("scope_key","key_id","valid_from")
);
--> statement-breakpoint
ALTER TABLE "free_features" RENAME TO "free_features_staged";--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers" RENAME TO "gpu_cluster_servers_staged";--> statement-breakpoint
ALTER TABLE "gpu_clusters" RENAME TO "gpu_clusters_staged";--> statement-breakpoint
ALTER TABLE "gpu_flavors" RENAME TO "gpu_flavors_staged";--> statement-breakpoint
ALTER TABLE "image_tags" RENAME TO "image_tags_staged";--> statement-breakpoint
ALTER TABLE "instance_ports" RENAME TO "instance_ports_staged";--> statement-breakpoint
ALTER TABLE "instances" RENAME TO "instances_staged";--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices" RENAME TO "k8s_cluster_prices_staged";--> statement-breakpoint
ALTER TABLE "keypairs" RENAME TO "keypairs_staged";--> statement-breakpoint
ALTER TABLE "storage_ssh_keys" RENAME TO "storage_ssh_keys_staged";--> statement-breakpoint
ALTER TABLE "free_features_staged" DROP CONSTRAINT "free_features_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers_staged" DROP CONSTRAINT "gpu_cluster_servers_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "gpu_clusters_staged" DROP CONSTRAINT "gpu_clusters_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "gpu_flavors_staged" DROP CONSTRAINT "gpu_flavors_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "image_tags_staged" DROP CONSTRAINT "image_tags_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "instance_ports_staged" DROP CONSTRAINT "instance_ports_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "instances_staged" DROP CONSTRAINT "instances_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_staged" DROP CONSTRAINT "k8s_cluster_prices_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "keypairs_staged" DROP CONSTRAINT "keypairs_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "storage_ssh_keys_staged" DROP CONSTRAINT "storage_ssh_keys_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
DROP INDEX "gpu_cluster_servers_tags_idx";--> statement-breakpoint
DROP INDEX "gpu_clusters_tags_idx";--> statement-breakpoint
DROP INDEX "instances_tags_idx";--> statement-breakpoint
ALTER TABLE "snapshots" ADD COLUMN "versioned" boolean DEFAULT false NOT NULL;--> statement-breakpoint
CREATE INDEX "free_features_versions_current_idx" ON "free_features_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "free_features_versions_ended_idx" ON "free_features_versions" USING btree ("valid_to") WHERE "free_features_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "gpu_cluster_servers_versions_current_idx" ON "gpu_cluster_servers_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "gpu_cluster_servers_versions_ended_idx" ON "gpu_cluster_servers_versions" USING btree ("valid_to") WHERE "gpu_cluster_servers_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "gpu_cluster_servers_versions_tags_idx" ON "gpu_cluster_servers_versions" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "gpu_clusters_versions_current_idx" ON "gpu_clusters_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "gpu_clusters_versions_ended_idx" ON "gpu_clusters_versions" USING btree ("valid_to") WHERE "gpu_clusters_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "gpu_clusters_versions_tags_idx" ON "gpu_clusters_versions" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "gpu_flavors_versions_current_idx" ON "gpu_flavors_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "gpu_flavors_versions_ended_idx" ON "gpu_flavors_versions" USING btree ("valid_to") WHERE "gpu_flavors_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "image_tags_versions_current_idx" ON "image_tags_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "image_tags_versions_ended_idx" ON "image_tags_versions" USING btree ("valid_to") WHERE "image_tags_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "instance_ports_versions_current_idx" ON "instance_ports_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "instance_ports_versions_ended_idx" ON "instance_ports_versions" USING btree ("valid_to") WHERE "instance_ports_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "instances_versions_current_idx" ON "instances_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "instances_versions_ended_idx" ON "instances_versions" USING btree ("valid_to") WHERE "instances_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "instances_versions_tags_idx" ON "instances_versions" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
CREATE INDEX "k8s_cluster_prices_versions_current_idx" ON "k8s_cluster_prices_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "k8s_cluster_prices_versions_ended_idx" ON "k8s_cluster_prices_versions" USING btree ("valid_to") WHERE "k8s_cluster_prices_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "keypairs_versions_current_idx" ON "keypairs_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "keypairs_versions_ended_idx" ON "keypairs_versions" USING btree ("valid_to") WHERE "keypairs_versions"."valid_to" is not null;--> statement-breakpoint
CREATE INDEX "storage_ssh_keys_versions_current_idx" ON "storage_ssh_keys_versions" USING btree ("scope_key",coalesce("valid_to", 'infinity'::timestamptz));--> statement-breakpoint
CREATE INDEX "storage_ssh_keys_versions_ended_idx" ON "storage_ssh_keys_versions" USING btree ("valid_to") WHERE "storage_ssh_keys_versions"."valid_to" is not null;--> statement-breakpoint
ALTER TABLE "free_features_staged" ADD CONSTRAINT "free_features_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers_staged" ADD CONSTRAINT "gpu_cluster_servers_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "gpu_clusters_staged" ADD CONSTRAINT "gpu_clusters_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "gpu_flavors_staged" ADD CONSTRAINT "gpu_flavors_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "image_tags_staged" ADD CONSTRAINT "image_tags_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instance_ports_staged" ADD CONSTRAINT "instance_ports_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "instances_staged" ADD CONSTRAINT "instances_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_staged" ADD CONSTRAINT "k8s_cluster_prices_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "keypairs_staged" ADD CONSTRAINT "keypairs_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "storage_ssh_keys_staged" ADD CONSTRAINT "storage_ssh_keys_staged_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
-- Hand-written (issue 15): existing per-snapshot rows folded into versions, then one view per
-- resource table under its old name (rows of every snapshot, with snapshot_id) so every query
-- keeps working. See src/db/DATA-MODEL.md, "History as versions".
-- 1. Complete snapshots are versioned, except those sharing taken_at with another complete snapshot
--    of their (kind, scope): a range of taken_at cannot tell those apart, so they stay staged rows.
UPDATE snapshots s SET versioned = true
 WHERE s.complete AND NOT EXISTS (
   SELECT 1 FROM snapshots o WHERE o.complete AND o.kind = s.kind AND o.scope_key = s.scope_key AND o.taken_at = s.taken_at AND o.id <> s.id);
--> statement-breakpoint
-- gpu_clusters: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'cluster'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."cluster_id", t."cluster_name", t."cluster_status", t."task_status", t."flavor_name", t."image_id", t."image_name", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."server_count", t."tags", t."tags_read_only", t."tags_original", t."raw")::text)::uuid AS hash, t."cluster_id", t."cluster_name", t."cluster_status", t."task_status", t."flavor_name", t."image_id", t."image_name", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."server_count", t."tags", t."tags_read_only", t."tags_original", t."raw"
    FROM "gpu_clusters_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "cluster_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "cluster_id", hash, island ORDER BY n)
)
INSERT INTO "gpu_clusters_versions" ("scope_key", "cluster_id", "cluster_name", "cluster_status", "task_status", "flavor_name", "image_id", "image_name", "project_id", "region_id", "region", "created_at", "ssh_key_name", "server_count", "tags", "tags_read_only", "tags_original", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "cluster_id", "cluster_name", "cluster_status", "task_status", "flavor_name", "image_id", "image_name", "project_id", "region_id", "region", "created_at", "ssh_key_name", "server_count", "tags", "tags_read_only", "tags_original", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "gpu_clusters_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "gpu_clusters" AS
SELECT s.id AS snapshot_id, v."cluster_id", v."cluster_name", v."cluster_status", v."task_status", v."flavor_name", v."image_id", v."image_name", v."project_id", v."region_id", v."region", v."created_at", v."ssh_key_name", v."server_count", v."tags", v."tags_read_only", v."tags_original", v."raw"
  FROM snapshots s
  JOIN "gpu_clusters_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'cluster'
UNION ALL
SELECT t.snapshot_id, t."cluster_id", t."cluster_name", t."cluster_status", t."task_status", t."flavor_name", t."image_id", t."image_name", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."server_count", t."tags", t."tags_read_only", t."tags_original", t."raw" FROM "gpu_clusters_staged" t;
--> statement-breakpoint
-- gpu_cluster_servers: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'cluster'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."cluster_id", t."server_id", t."name", t."status", t."vm_state", t."flavor_id", t."flavor_name", t."resource_class", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."tags", t."tags_read_only", t."tags_original", t."raw")::text)::uuid AS hash, t."cluster_id", t."server_id", t."name", t."status", t."vm_state", t."flavor_id", t."flavor_name", t."resource_class", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."tags", t."tags_read_only", t."tags_original", t."raw"
    FROM "gpu_cluster_servers_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "cluster_id", "server_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "cluster_id", "server_id", hash, island ORDER BY n)
)
INSERT INTO "gpu_cluster_servers_versions" ("scope_key", "cluster_id", "server_id", "name", "status", "vm_state", "flavor_id", "flavor_name", "resource_class", "project_id", "region_id", "region", "created_at", "ssh_key_name", "tags", "tags_read_only", "tags_original", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "cluster_id", "server_id", "name", "status", "vm_state", "flavor_id", "flavor_name", "resource_class", "project_id", "region_id", "region", "created_at", "ssh_key_name", "tags", "tags_read_only", "tags_original", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "gpu_cluster_servers_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "gpu_cluster_servers" AS
SELECT s.id AS snapshot_id, v."cluster_id", v."server_id", v."name", v."status", v."vm_state", v."flavor_id", v."flavor_name", v."resource_class", v."project_id", v."region_id", v."region", v."created_at", v."ssh_key_name", v."tags", v."tags_read_only", v."tags_original", v."raw"
  FROM snapshots s
  JOIN "gpu_cluster_servers_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'cluster'
UNION ALL
SELECT t.snapshot_id, t."cluster_id", t."server_id", t."name", t."status", t."vm_state", t."flavor_id", t."flavor_name", t."resource_class", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."tags", t."tags_read_only", t."tags_original", t."raw" FROM "gpu_cluster_servers_staged" t;
--> statement-breakpoint
-- instances: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'instance'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."instance_id", t."name", t."description", t."status", t."vm_state", t."task_state", t."flavor_id", t."flavor_name", t."vcpus", t."ram", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."security_group_ids", t."security_group_names", t."volume_count", t."tags", t."tags_read_only", t."tags_original", t."raw")::text)::uuid AS hash, t."instance_id", t."name", t."description", t."status", t."vm_state", t."task_state", t."flavor_id", t."flavor_name", t."vcpus", t."ram", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."security_group_ids", t."security_group_names", t."volume_count", t."tags", t."tags_read_only", t."tags_original", t."raw"
    FROM "instances_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "instance_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "instance_id", hash, island ORDER BY n)
)
INSERT INTO "instances_versions" ("scope_key", "instance_id", "name", "description", "status", "vm_state", "task_state", "flavor_id", "flavor_name", "vcpus", "ram", "project_id", "region_id", "region", "created_at", "ssh_key_name", "security_group_ids", "security_group_names", "volume_count", "tags", "tags_read_only", "tags_original", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "instance_id", "name", "description", "status", "vm_state", "task_state", "flavor_id", "flavor_name", "vcpus", "ram", "project_id", "region_id", "region", "created_at", "ssh_key_name", "security_group_ids", "security_group_names", "volume_count", "tags", "tags_read_only", "tags_original", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "instances_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "instances" AS
SELECT s.id AS snapshot_id, v."instance_id", v."name", v."description", v."status", v."vm_state", v."task_state", v."flavor_id", v."flavor_name", v."vcpus", v."ram", v."project_id", v."region_id", v."region", v."created_at", v."ssh_key_name", v."security_group_ids", v."security_group_names", v."volume_count", v."tags", v."tags_read_only", v."tags_original", v."raw"
  FROM snapshots s
  JOIN "instances_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'instance'
UNION ALL
SELECT t.snapshot_id, t."instance_id", t."name", t."description", t."status", t."vm_state", t."task_state", t."flavor_id", t."flavor_name", t."vcpus", t."ram", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."security_group_ids", t."security_group_names", t."volume_count", t."tags", t."tags_read_only", t."tags_original", t."raw" FROM "instances_staged" t;
--> statement-breakpoint
-- instance_ports: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'port'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."instance_id", t."port_id", t."name", t."security_groups", t."project_id", t."region_id", t."raw", t."read_at")::text)::uuid AS hash, t."instance_id", t."port_id", t."name", t."security_groups", t."project_id", t."region_id", t."raw", t."read_at"
    FROM "instance_ports_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "instance_id", "port_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "instance_id", "port_id", hash, island ORDER BY n)
)
INSERT INTO "instance_ports_versions" ("scope_key", "instance_id", "port_id", "name", "security_groups", "project_id", "region_id", "raw", "read_at", "hash", "valid_from", "valid_to")
SELECT scope_key, "instance_id", "port_id", "name", "security_groups", "project_id", "region_id", "raw", "read_at", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "instance_ports_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "instance_ports" AS
SELECT s.id AS snapshot_id, v."instance_id", v."port_id", v."name", v."security_groups", v."project_id", v."region_id", v."raw", v."read_at"
  FROM snapshots s
  JOIN "instance_ports_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'port'
UNION ALL
SELECT t.snapshot_id, t."instance_id", t."port_id", t."name", t."security_groups", t."project_id", t."region_id", t."raw", t."read_at" FROM "instance_ports_staged" t;
--> statement-breakpoint
-- keypairs: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'keypair'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."keypair_id", t."name", t."fingerprint", t."state", t."shared_in_project", t."project_id", t."region_id", t."created_at", t."raw")::text)::uuid AS hash, t."keypair_id", t."name", t."fingerprint", t."state", t."shared_in_project", t."project_id", t."region_id", t."created_at", t."raw"
    FROM "keypairs_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "keypair_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "keypair_id", hash, island ORDER BY n)
)
INSERT INTO "keypairs_versions" ("scope_key", "keypair_id", "name", "fingerprint", "state", "shared_in_project", "project_id", "region_id", "created_at", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "keypair_id", "name", "fingerprint", "state", "shared_in_project", "project_id", "region_id", "created_at", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "keypairs_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "keypairs" AS
SELECT s.id AS snapshot_id, v."keypair_id", v."name", v."fingerprint", v."state", v."shared_in_project", v."project_id", v."region_id", v."created_at", v."raw"
  FROM snapshots s
  JOIN "keypairs_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'keypair'
UNION ALL
SELECT t.snapshot_id, t."keypair_id", t."name", t."fingerprint", t."state", t."shared_in_project", t."project_id", t."region_id", t."created_at", t."raw" FROM "keypairs_staged" t;
--> statement-breakpoint
-- storage_ssh_keys: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'storage_key'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."key_id", t."name", t."created_at", t."raw")::text)::uuid AS hash, t."key_id", t."name", t."created_at", t."raw"
    FROM "storage_ssh_keys_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "key_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "key_id", hash, island ORDER BY n)
)
INSERT INTO "storage_ssh_keys_versions" ("scope_key", "key_id", "name", "created_at", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "key_id", "name", "created_at", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "storage_ssh_keys_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "storage_ssh_keys" AS
SELECT s.id AS snapshot_id, v."key_id", v."name", v."created_at", v."raw"
  FROM snapshots s
  JOIN "storage_ssh_keys_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'storage_key'
UNION ALL
SELECT t.snapshot_id, t."key_id", t."name", t."created_at", t."raw" FROM "storage_ssh_keys_staged" t;
--> statement-breakpoint
-- image_tags: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'image_tag'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."image_id", t."key", t."value", t."read_only", t."project_id", t."region_id", t."raw")::text)::uuid AS hash, t."image_id", t."key", t."value", t."read_only", t."project_id", t."region_id", t."raw"
    FROM "image_tags_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "image_id", "key", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "image_id", "key", hash, island ORDER BY n)
)
INSERT INTO "image_tags_versions" ("scope_key", "image_id", "key", "value", "read_only", "project_id", "region_id", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "image_id", "key", "value", "read_only", "project_id", "region_id", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "image_tags_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "image_tags" AS
SELECT s.id AS snapshot_id, v."image_id", v."key", v."value", v."read_only", v."project_id", v."region_id", v."raw"
  FROM snapshots s
  JOIN "image_tags_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'image_tag'
UNION ALL
SELECT t.snapshot_id, t."image_id", t."key", t."value", t."read_only", t."project_id", t."region_id", t."raw" FROM "image_tags_staged" t;
--> statement-breakpoint
-- free_features: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'free_feature'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."activation_id", t."client_id", t."feature_id", t."feature_name", t."feature_service", t."is_free", t."created_at", t."raw")::text)::uuid AS hash, t."activation_id", t."client_id", t."feature_id", t."feature_name", t."feature_service", t."is_free", t."created_at", t."raw"
    FROM "free_features_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "activation_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "activation_id", hash, island ORDER BY n)
)
INSERT INTO "free_features_versions" ("scope_key", "activation_id", "client_id", "feature_id", "feature_name", "feature_service", "is_free", "created_at", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "activation_id", "client_id", "feature_id", "feature_name", "feature_service", "is_free", "created_at", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "free_features_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "free_features" AS
SELECT s.id AS snapshot_id, v."activation_id", v."client_id", v."feature_id", v."feature_name", v."feature_service", v."is_free", v."created_at", v."raw"
  FROM snapshots s
  JOIN "free_features_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'free_feature'
UNION ALL
SELECT t.snapshot_id, t."activation_id", t."client_id", t."feature_id", t."feature_name", t."feature_service", t."is_free", t."created_at", t."raw" FROM "free_features_staged" t;
--> statement-breakpoint
-- gpu_flavors: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'flavor'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."flavor_id", t."flavor_name", t."disabled", t."capacity", t."currency_code", t."price_per_hour", t."price_per_month", t."price_status", t."resource_class", t."hardware", t."project_id", t."region_id", t."raw")::text)::uuid AS hash, t."flavor_id", t."flavor_name", t."disabled", t."capacity", t."currency_code", t."price_per_hour", t."price_per_month", t."price_status", t."resource_class", t."hardware", t."project_id", t."region_id", t."raw"
    FROM "gpu_flavors_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "flavor_id", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "flavor_id", hash, island ORDER BY n)
)
INSERT INTO "gpu_flavors_versions" ("scope_key", "flavor_id", "flavor_name", "disabled", "capacity", "currency_code", "price_per_hour", "price_per_month", "price_status", "resource_class", "hardware", "project_id", "region_id", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "flavor_id", "flavor_name", "disabled", "capacity", "currency_code", "price_per_hour", "price_per_month", "price_status", "resource_class", "hardware", "project_id", "region_id", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "gpu_flavors_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "gpu_flavors" AS
SELECT s.id AS snapshot_id, v."flavor_id", v."flavor_name", v."disabled", v."capacity", v."currency_code", v."price_per_hour", v."price_per_month", v."price_status", v."resource_class", v."hardware", v."project_id", v."region_id", v."raw"
  FROM snapshots s
  JOIN "gpu_flavors_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'flavor'
UNION ALL
SELECT t.snapshot_id, t."flavor_id", t."flavor_name", t."disabled", t."capacity", t."currency_code", t."price_per_hour", t."price_per_month", t."price_status", t."resource_class", t."hardware", t."project_id", t."region_id", t."raw" FROM "gpu_flavors_staged" t;
--> statement-breakpoint
-- k8s_cluster_prices: per resource, each run of consecutive versioned snapshots of its scope with the same
-- content (hash) becomes one version, current from the run's first snapshot to the snapshot after its last.
WITH seq AS (
  SELECT id, scope_key, taken_at, row_number() OVER w AS n, lead(taken_at) OVER w AS next_at
    FROM snapshots WHERE versioned AND kind = 'k8s_price'
  WINDOW w AS (PARTITION BY scope_key ORDER BY taken_at)
), r AS (
  SELECT seq.scope_key, seq.n, seq.taken_at, seq.next_at, md5(row(t."cluster_name", t."currency_code", t."price_per_hour", t."price_per_month", t."price_without_discount_per_month", t."discount_percent", t."tax_percent", t."price_status", t."breakdown", t."project_id", t."region_id", t."raw")::text)::uuid AS hash, t."cluster_name", t."currency_code", t."price_per_hour", t."price_per_month", t."price_without_discount_per_month", t."discount_percent", t."tax_percent", t."price_status", t."breakdown", t."project_id", t."region_id", t."raw"
    FROM "k8s_cluster_prices_staged" t JOIN seq ON seq.id = t.snapshot_id
), islands AS (
  SELECT r.*, r.n - row_number() OVER (PARTITION BY scope_key, "cluster_name", hash ORDER BY n) AS island FROM r
), bounded AS (
  SELECT islands.*,
         row_number() OVER i AS k,
         last_value(next_at) OVER (i ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS ends
    FROM islands
  WINDOW i AS (PARTITION BY scope_key, "cluster_name", hash, island ORDER BY n)
)
INSERT INTO "k8s_cluster_prices_versions" ("scope_key", "cluster_name", "currency_code", "price_per_hour", "price_per_month", "price_without_discount_per_month", "discount_percent", "tax_percent", "price_status", "breakdown", "project_id", "region_id", "raw", "hash", "valid_from", "valid_to")
SELECT scope_key, "cluster_name", "currency_code", "price_per_hour", "price_per_month", "price_without_discount_per_month", "discount_percent", "tax_percent", "price_status", "breakdown", "project_id", "region_id", "raw", hash, taken_at, ends FROM bounded WHERE k = 1;
--> statement-breakpoint
DELETE FROM "k8s_cluster_prices_staged" t USING snapshots s WHERE s.id = t.snapshot_id AND s.versioned;
--> statement-breakpoint
CREATE VIEW "k8s_cluster_prices" AS
SELECT s.id AS snapshot_id, v."cluster_name", v."currency_code", v."price_per_hour", v."price_per_month", v."price_without_discount_per_month", v."discount_percent", v."tax_percent", v."price_status", v."breakdown", v."project_id", v."region_id", v."raw"
  FROM snapshots s
  JOIN "k8s_cluster_prices_versions" v ON v.scope_key = s.scope_key
   AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
 WHERE s.versioned AND s.kind = 'k8s_price'
UNION ALL
SELECT t.snapshot_id, t."cluster_name", t."currency_code", t."price_per_hour", t."price_per_month", t."price_without_discount_per_month", t."discount_percent", t."tax_percent", t."price_status", t."breakdown", t."project_id", t."region_id", t."raw" FROM "k8s_cluster_prices_staged" t;
--> statement-breakpoint
ALTER VIEW "gpu_clusters" ALTER COLUMN "server_count" SET DEFAULT 0;
--> statement-breakpoint
ALTER VIEW "gpu_clusters" ALTER COLUMN "tags" SET DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER VIEW "gpu_clusters" ALTER COLUMN "tags_read_only" SET DEFAULT '{}'::text[];
--> statement-breakpoint
ALTER VIEW "gpu_clusters" ALTER COLUMN "tags_original" SET DEFAULT '[]'::jsonb;
--> statement-breakpoint
CREATE FUNCTION "gpu_clusters_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "gpu_clusters_staged" ("snapshot_id", "cluster_id", "cluster_name", "cluster_status", "task_status", "flavor_name", "image_id", "image_name", "project_id", "region_id", "region", "created_at", "ssh_key_name", "server_count", "tags", "tags_read_only", "tags_original", "raw")
  VALUES (NEW."snapshot_id", NEW."cluster_id", NEW."cluster_name", NEW."cluster_status", NEW."task_status", NEW."flavor_name", NEW."image_id", NEW."image_name", NEW."project_id", NEW."region_id", NEW."region", NEW."created_at", NEW."ssh_key_name", NEW."server_count", NEW."tags", NEW."tags_read_only", NEW."tags_original", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "gpu_clusters_stage" INSTEAD OF INSERT ON "gpu_clusters" FOR EACH ROW EXECUTE FUNCTION "gpu_clusters_stage"();
--> statement-breakpoint
ALTER VIEW "gpu_cluster_servers" ALTER COLUMN "tags" SET DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER VIEW "gpu_cluster_servers" ALTER COLUMN "tags_read_only" SET DEFAULT '{}'::text[];
--> statement-breakpoint
ALTER VIEW "gpu_cluster_servers" ALTER COLUMN "tags_original" SET DEFAULT '[]'::jsonb;
--> statement-breakpoint
CREATE FUNCTION "gpu_cluster_servers_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "gpu_cluster_servers_staged" ("snapshot_id", "cluster_id", "server_id", "name", "status", "vm_state", "flavor_id", "flavor_name", "resource_class", "project_id", "region_id", "region", "created_at", "ssh_key_name", "tags", "tags_read_only", "tags_original", "raw")
  VALUES (NEW."snapshot_id", NEW."cluster_id", NEW."server_id", NEW."name", NEW."status", NEW."vm_state", NEW."flavor_id", NEW."flavor_name", NEW."resource_class", NEW."project_id", NEW."region_id", NEW."region", NEW."created_at", NEW."ssh_key_name", NEW."tags", NEW."tags_read_only", NEW."tags_original", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "gpu_cluster_servers_stage" INSTEAD OF INSERT ON "gpu_cluster_servers" FOR EACH ROW EXECUTE FUNCTION "gpu_cluster_servers_stage"();
--> statement-breakpoint
ALTER VIEW "instances" ALTER COLUMN "security_group_ids" SET DEFAULT '{}'::text[];
--> statement-breakpoint
ALTER VIEW "instances" ALTER COLUMN "security_group_names" SET DEFAULT '{}'::text[];
--> statement-breakpoint
ALTER VIEW "instances" ALTER COLUMN "tags" SET DEFAULT '{}'::jsonb;
--> statement-breakpoint
ALTER VIEW "instances" ALTER COLUMN "tags_read_only" SET DEFAULT '{}'::text[];
--> statement-breakpoint
ALTER VIEW "instances" ALTER COLUMN "tags_original" SET DEFAULT '[]'::jsonb;
--> statement-breakpoint
CREATE FUNCTION "instances_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "instances_staged" ("snapshot_id", "instance_id", "name", "description", "status", "vm_state", "task_state", "flavor_id", "flavor_name", "vcpus", "ram", "project_id", "region_id", "region", "created_at", "ssh_key_name", "security_group_ids", "security_group_names", "volume_count", "tags", "tags_read_only", "tags_original", "raw")
  VALUES (NEW."snapshot_id", NEW."instance_id", NEW."name", NEW."description", NEW."status", NEW."vm_state", NEW."task_state", NEW."flavor_id", NEW."flavor_name", NEW."vcpus", NEW."ram", NEW."project_id", NEW."region_id", NEW."region", NEW."created_at", NEW."ssh_key_name", NEW."security_group_ids", NEW."security_group_names", NEW."volume_count", NEW."tags", NEW."tags_read_only", NEW."tags_original", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "instances_stage" INSTEAD OF INSERT ON "instances" FOR EACH ROW EXECUTE FUNCTION "instances_stage"();
--> statement-breakpoint
CREATE FUNCTION "instance_ports_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "instance_ports_staged" ("snapshot_id", "instance_id", "port_id", "name", "security_groups", "project_id", "region_id", "raw", "read_at")
  VALUES (NEW."snapshot_id", NEW."instance_id", NEW."port_id", NEW."name", NEW."security_groups", NEW."project_id", NEW."region_id", NEW."raw", NEW."read_at");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "instance_ports_stage" INSTEAD OF INSERT ON "instance_ports" FOR EACH ROW EXECUTE FUNCTION "instance_ports_stage"();
--> statement-breakpoint
CREATE FUNCTION "keypairs_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "keypairs_staged" ("snapshot_id", "keypair_id", "name", "fingerprint", "state", "shared_in_project", "project_id", "region_id", "created_at", "raw")
  VALUES (NEW."snapshot_id", NEW."keypair_id", NEW."name", NEW."fingerprint", NEW."state", NEW."shared_in_project", NEW."project_id", NEW."region_id", NEW."created_at", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "keypairs_stage" INSTEAD OF INSERT ON "keypairs" FOR EACH ROW EXECUTE FUNCTION "keypairs_stage"();
--> statement-breakpoint
CREATE FUNCTION "storage_ssh_keys_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "storage_ssh_keys_staged" ("snapshot_id", "key_id", "name", "created_at", "raw")
  VALUES (NEW."snapshot_id", NEW."key_id", NEW."name", NEW."created_at", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "storage_ssh_keys_stage" INSTEAD OF INSERT ON "storage_ssh_keys" FOR EACH ROW EXECUTE FUNCTION "storage_ssh_keys_stage"();
--> statement-breakpoint
ALTER VIEW "image_tags" ALTER COLUMN "read_only" SET DEFAULT false;
--> statement-breakpoint
CREATE FUNCTION "image_tags_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "image_tags_staged" ("snapshot_id", "image_id", "key", "value", "read_only", "project_id", "region_id", "raw")
  VALUES (NEW."snapshot_id", NEW."image_id", NEW."key", NEW."value", NEW."read_only", NEW."project_id", NEW."region_id", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "image_tags_stage" INSTEAD OF INSERT ON "image_tags" FOR EACH ROW EXECUTE FUNCTION "image_tags_stage"();
--> statement-breakpoint
CREATE FUNCTION "free_features_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "free_features_staged" ("snapshot_id", "activation_id", "client_id", "feature_id", "feature_name", "feature_service", "is_free", "created_at", "raw")
  VALUES (NEW."snapshot_id", NEW."activation_id", NEW."client_id", NEW."feature_id", NEW."feature_name", NEW."feature_service", NEW."is_free", NEW."created_at", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "free_features_stage" INSTEAD OF INSERT ON "free_features" FOR EACH ROW EXECUTE FUNCTION "free_features_stage"();
--> statement-breakpoint
ALTER VIEW "gpu_flavors" ALTER COLUMN "disabled" SET DEFAULT false;
--> statement-breakpoint
CREATE FUNCTION "gpu_flavors_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "gpu_flavors_staged" ("snapshot_id", "flavor_id", "flavor_name", "disabled", "capacity", "currency_code", "price_per_hour", "price_per_month", "price_status", "resource_class", "hardware", "project_id", "region_id", "raw")
  VALUES (NEW."snapshot_id", NEW."flavor_id", NEW."flavor_name", NEW."disabled", NEW."capacity", NEW."currency_code", NEW."price_per_hour", NEW."price_per_month", NEW."price_status", NEW."resource_class", NEW."hardware", NEW."project_id", NEW."region_id", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "gpu_flavors_stage" INSTEAD OF INSERT ON "gpu_flavors" FOR EACH ROW EXECUTE FUNCTION "gpu_flavors_stage"();
--> statement-breakpoint
CREATE FUNCTION "k8s_cluster_prices_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "k8s_cluster_prices_staged" ("snapshot_id", "cluster_name", "currency_code", "price_per_hour", "price_per_month", "price_without_discount_per_month", "discount_percent", "tax_percent", "price_status", "breakdown", "project_id", "region_id", "raw")
  VALUES (NEW."snapshot_id", NEW."cluster_name", NEW."currency_code", NEW."price_per_hour", NEW."price_per_month", NEW."price_without_discount_per_month", NEW."discount_percent", NEW."tax_percent", NEW."price_status", NEW."breakdown", NEW."project_id", NEW."region_id", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
CREATE TRIGGER "k8s_cluster_prices_stage" INSTEAD OF INSERT ON "k8s_cluster_prices" FOR EACH ROW EXECUTE FUNCTION "k8s_cluster_prices_stage"();
--> statement-breakpoint
-- instance_status_overrides followed the renamed tables (views bind by oid): point it at the views.
CREATE OR REPLACE VIEW "instance_status_overrides" AS select distinct on (a.instance_id, a.project_id, a.region_id)
    a.instance_id, a.project_id, a.region_id, 'SHUTOFF'::text as status, a.at as changed_at, a.id as audit_id
  from audit_log a
  where a.action = 'stop' and not a.dry_run and a.result = 'stopped'
    and a.instance_id is not null and a.project_id is not null and a.region_id is not null
    and not exists (
      select 1 from snapshots s
      where s.complete and s.kind in ('instance', 'cluster')
        and s.scope_key = 'p' || a.project_id || '-r' || a.region_id
        and s.taken_at > a.at
        and (exists (select 1 from instances i where i.snapshot_id = s.id and i.instance_id = a.instance_id)
          or exists (select 1 from gpu_cluster_servers g where g.snapshot_id = s.id and g.server_id = a.instance_id))
    )
  order by a.instance_id, a.project_id, a.region_id, a.at desc, a.id desc;
