-- Hand-written (issue 25, item 5): staging without WAL. The <name>_staged tables were logged, so
-- every collection wrote each row's WAL twice (staged, then deleted at the fold) even when nothing
-- changed, shipped it to every replica, and left the deleted rows' pages until a vacuum. Now:
--   * the old logged tables are renamed <name>_kept: the rows of complete snapshots that were not
--     folded (backdated), which must survive a crash and reach replicas. The views and the
--     INSTEAD OF INSERT triggers now read and write them (the views follow the rename);
--   * <name>_staged is a new UNLOGGED table of the same shape and primary key: the collectors' write
--     buffer, emptied at finalising and truncated once a collector's scopes are all finalised.
--     Nothing reads it but the fold (an unlogged table cannot be read on a replica);
--   * rows of snapshots not yet complete move back to the buffer.
-- On a database already distributed with Citus, the moves below run on every shard, after which
-- Citus creates the trigger functions on the workers only if the moves used one connection per
-- worker (sequential); elsewhere the setting is an unused placeholder.
SET LOCAL citus.multi_shard_modify_mode TO 'sequential';
--> statement-breakpoint
ALTER TABLE "gpu_clusters_staged" RENAME TO "gpu_clusters_kept";
--> statement-breakpoint
ALTER INDEX "gpu_clusters_pk" RENAME TO "gpu_clusters_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "gpu_clusters_staged" (LIKE "gpu_clusters_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "gpu_clusters_staged" ADD CONSTRAINT "gpu_clusters_pk" PRIMARY KEY ("snapshot_id", "cluster_id");
--> statement-breakpoint
INSERT INTO "gpu_clusters_staged" ("snapshot_id", "cluster_id", "cluster_name", "cluster_status", "task_status", "flavor_name", "image_id", "image_name", "project_id", "region_id", "region", "created_at", "ssh_key_name", "server_count", "tags", "tags_read_only", "tags_original", "raw") SELECT "snapshot_id", "cluster_id", "cluster_name", "cluster_status", "task_status", "flavor_name", "image_id", "image_name", "project_id", "region_id", "region", "created_at", "ssh_key_name", "server_count", "tags", "tags_read_only", "tags_original", "raw" FROM "gpu_clusters_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "gpu_clusters_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "gpu_clusters_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "gpu_clusters_kept" ("snapshot_id", "cluster_id", "cluster_name", "cluster_status", "task_status", "flavor_name", "image_id", "image_name", "project_id", "region_id", "region", "created_at", "ssh_key_name", "server_count", "tags", "tags_read_only", "tags_original", "raw")
  VALUES (NEW."snapshot_id", NEW."cluster_id", NEW."cluster_name", NEW."cluster_status", NEW."task_status", NEW."flavor_name", NEW."image_id", NEW."image_name", NEW."project_id", NEW."region_id", NEW."region", NEW."created_at", NEW."ssh_key_name", NEW."server_count", NEW."tags", NEW."tags_read_only", NEW."tags_original", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers_staged" RENAME TO "gpu_cluster_servers_kept";
--> statement-breakpoint
ALTER INDEX "gpu_cluster_servers_pk" RENAME TO "gpu_cluster_servers_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "gpu_cluster_servers_staged" (LIKE "gpu_cluster_servers_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers_staged" ADD CONSTRAINT "gpu_cluster_servers_pk" PRIMARY KEY ("snapshot_id", "cluster_id", "server_id");
--> statement-breakpoint
INSERT INTO "gpu_cluster_servers_staged" ("snapshot_id", "cluster_id", "server_id", "name", "status", "vm_state", "flavor_id", "flavor_name", "resource_class", "project_id", "region_id", "region", "created_at", "ssh_key_name", "tags", "tags_read_only", "tags_original", "raw") SELECT "snapshot_id", "cluster_id", "server_id", "name", "status", "vm_state", "flavor_id", "flavor_name", "resource_class", "project_id", "region_id", "region", "created_at", "ssh_key_name", "tags", "tags_read_only", "tags_original", "raw" FROM "gpu_cluster_servers_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "gpu_cluster_servers_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "gpu_cluster_servers_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "gpu_cluster_servers_kept" ("snapshot_id", "cluster_id", "server_id", "name", "status", "vm_state", "flavor_id", "flavor_name", "resource_class", "project_id", "region_id", "region", "created_at", "ssh_key_name", "tags", "tags_read_only", "tags_original", "raw")
  VALUES (NEW."snapshot_id", NEW."cluster_id", NEW."server_id", NEW."name", NEW."status", NEW."vm_state", NEW."flavor_id", NEW."flavor_name", NEW."resource_class", NEW."project_id", NEW."region_id", NEW."region", NEW."created_at", NEW."ssh_key_name", NEW."tags", NEW."tags_read_only", NEW."tags_original", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "instances_staged" RENAME TO "instances_kept";
--> statement-breakpoint
ALTER INDEX "instances_pk" RENAME TO "instances_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "instances_staged" (LIKE "instances_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "instances_staged" ADD CONSTRAINT "instances_pk" PRIMARY KEY ("snapshot_id", "instance_id");
--> statement-breakpoint
INSERT INTO "instances_staged" ("snapshot_id", "instance_id", "name", "description", "status", "vm_state", "task_state", "flavor_id", "flavor_name", "vcpus", "ram", "project_id", "region_id", "region", "created_at", "ssh_key_name", "security_group_ids", "security_group_names", "volume_count", "tags", "tags_read_only", "tags_original", "raw") SELECT "snapshot_id", "instance_id", "name", "description", "status", "vm_state", "task_state", "flavor_id", "flavor_name", "vcpus", "ram", "project_id", "region_id", "region", "created_at", "ssh_key_name", "security_group_ids", "security_group_names", "volume_count", "tags", "tags_read_only", "tags_original", "raw" FROM "instances_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "instances_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "instances_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "instances_kept" ("snapshot_id", "instance_id", "name", "description", "status", "vm_state", "task_state", "flavor_id", "flavor_name", "vcpus", "ram", "project_id", "region_id", "region", "created_at", "ssh_key_name", "security_group_ids", "security_group_names", "volume_count", "tags", "tags_read_only", "tags_original", "raw")
  VALUES (NEW."snapshot_id", NEW."instance_id", NEW."name", NEW."description", NEW."status", NEW."vm_state", NEW."task_state", NEW."flavor_id", NEW."flavor_name", NEW."vcpus", NEW."ram", NEW."project_id", NEW."region_id", NEW."region", NEW."created_at", NEW."ssh_key_name", NEW."security_group_ids", NEW."security_group_names", NEW."volume_count", NEW."tags", NEW."tags_read_only", NEW."tags_original", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "instance_ports_staged" RENAME TO "instance_ports_kept";
--> statement-breakpoint
ALTER INDEX "instance_ports_pk" RENAME TO "instance_ports_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "instance_ports_staged" (LIKE "instance_ports_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "instance_ports_staged" ADD CONSTRAINT "instance_ports_pk" PRIMARY KEY ("snapshot_id", "instance_id", "port_id");
--> statement-breakpoint
INSERT INTO "instance_ports_staged" ("snapshot_id", "instance_id", "port_id", "name", "security_groups", "project_id", "region_id", "raw", "read_at") SELECT "snapshot_id", "instance_id", "port_id", "name", "security_groups", "project_id", "region_id", "raw", "read_at" FROM "instance_ports_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "instance_ports_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "instance_ports_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "instance_ports_kept" ("snapshot_id", "instance_id", "port_id", "name", "security_groups", "project_id", "region_id", "raw", "read_at")
  VALUES (NEW."snapshot_id", NEW."instance_id", NEW."port_id", NEW."name", NEW."security_groups", NEW."project_id", NEW."region_id", NEW."raw", NEW."read_at");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "keypairs_staged" RENAME TO "keypairs_kept";
--> statement-breakpoint
ALTER INDEX "keypairs_pk" RENAME TO "keypairs_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "keypairs_staged" (LIKE "keypairs_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "keypairs_staged" ADD CONSTRAINT "keypairs_pk" PRIMARY KEY ("snapshot_id", "keypair_id");
--> statement-breakpoint
INSERT INTO "keypairs_staged" ("snapshot_id", "keypair_id", "name", "fingerprint", "state", "shared_in_project", "project_id", "region_id", "created_at", "raw") SELECT "snapshot_id", "keypair_id", "name", "fingerprint", "state", "shared_in_project", "project_id", "region_id", "created_at", "raw" FROM "keypairs_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "keypairs_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "keypairs_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "keypairs_kept" ("snapshot_id", "keypair_id", "name", "fingerprint", "state", "shared_in_project", "project_id", "region_id", "created_at", "raw")
  VALUES (NEW."snapshot_id", NEW."keypair_id", NEW."name", NEW."fingerprint", NEW."state", NEW."shared_in_project", NEW."project_id", NEW."region_id", NEW."created_at", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "storage_ssh_keys_staged" RENAME TO "storage_ssh_keys_kept";
--> statement-breakpoint
ALTER INDEX "storage_ssh_keys_pk" RENAME TO "storage_ssh_keys_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "storage_ssh_keys_staged" (LIKE "storage_ssh_keys_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "storage_ssh_keys_staged" ADD CONSTRAINT "storage_ssh_keys_pk" PRIMARY KEY ("snapshot_id", "key_id");
--> statement-breakpoint
INSERT INTO "storage_ssh_keys_staged" ("snapshot_id", "key_id", "name", "created_at", "raw") SELECT "snapshot_id", "key_id", "name", "created_at", "raw" FROM "storage_ssh_keys_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "storage_ssh_keys_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "storage_ssh_keys_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "storage_ssh_keys_kept" ("snapshot_id", "key_id", "name", "created_at", "raw")
  VALUES (NEW."snapshot_id", NEW."key_id", NEW."name", NEW."created_at", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "image_tags_staged" RENAME TO "image_tags_kept";
--> statement-breakpoint
ALTER INDEX "image_tags_pk" RENAME TO "image_tags_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "image_tags_staged" (LIKE "image_tags_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "image_tags_staged" ADD CONSTRAINT "image_tags_pk" PRIMARY KEY ("snapshot_id", "image_id", "key");
--> statement-breakpoint
INSERT INTO "image_tags_staged" ("snapshot_id", "image_id", "key", "value", "read_only", "project_id", "region_id", "raw") SELECT "snapshot_id", "image_id", "key", "value", "read_only", "project_id", "region_id", "raw" FROM "image_tags_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "image_tags_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "image_tags_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "image_tags_kept" ("snapshot_id", "image_id", "key", "value", "read_only", "project_id", "region_id", "raw")
  VALUES (NEW."snapshot_id", NEW."image_id", NEW."key", NEW."value", NEW."read_only", NEW."project_id", NEW."region_id", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "free_features_staged" RENAME TO "free_features_kept";
--> statement-breakpoint
ALTER INDEX "free_features_pk" RENAME TO "free_features_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "free_features_staged" (LIKE "free_features_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "free_features_staged" ADD CONSTRAINT "free_features_pk" PRIMARY KEY ("snapshot_id", "activation_id");
--> statement-breakpoint
INSERT INTO "free_features_staged" ("snapshot_id", "activation_id", "client_id", "feature_id", "feature_name", "feature_service", "is_free", "created_at", "raw") SELECT "snapshot_id", "activation_id", "client_id", "feature_id", "feature_name", "feature_service", "is_free", "created_at", "raw" FROM "free_features_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "free_features_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "free_features_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "free_features_kept" ("snapshot_id", "activation_id", "client_id", "feature_id", "feature_name", "feature_service", "is_free", "created_at", "raw")
  VALUES (NEW."snapshot_id", NEW."activation_id", NEW."client_id", NEW."feature_id", NEW."feature_name", NEW."feature_service", NEW."is_free", NEW."created_at", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "gpu_flavors_staged" RENAME TO "gpu_flavors_kept";
--> statement-breakpoint
ALTER INDEX "gpu_flavors_pk" RENAME TO "gpu_flavors_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "gpu_flavors_staged" (LIKE "gpu_flavors_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "gpu_flavors_staged" ADD CONSTRAINT "gpu_flavors_pk" PRIMARY KEY ("snapshot_id", "flavor_id");
--> statement-breakpoint
INSERT INTO "gpu_flavors_staged" ("snapshot_id", "flavor_id", "flavor_name", "disabled", "capacity", "currency_code", "price_per_hour", "price_per_month", "price_status", "resource_class", "hardware", "project_id", "region_id", "raw") SELECT "snapshot_id", "flavor_id", "flavor_name", "disabled", "capacity", "currency_code", "price_per_hour", "price_per_month", "price_status", "resource_class", "hardware", "project_id", "region_id", "raw" FROM "gpu_flavors_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "gpu_flavors_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "gpu_flavors_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "gpu_flavors_kept" ("snapshot_id", "flavor_id", "flavor_name", "disabled", "capacity", "currency_code", "price_per_hour", "price_per_month", "price_status", "resource_class", "hardware", "project_id", "region_id", "raw")
  VALUES (NEW."snapshot_id", NEW."flavor_id", NEW."flavor_name", NEW."disabled", NEW."capacity", NEW."currency_code", NEW."price_per_hour", NEW."price_per_month", NEW."price_status", NEW."resource_class", NEW."hardware", NEW."project_id", NEW."region_id", NEW."raw");
  RETURN NEW;
END $$;
--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_staged" RENAME TO "k8s_cluster_prices_kept";
--> statement-breakpoint
ALTER INDEX "k8s_cluster_prices_pk" RENAME TO "k8s_cluster_prices_kept_pk";
--> statement-breakpoint
CREATE UNLOGGED TABLE "k8s_cluster_prices_staged" (LIKE "k8s_cluster_prices_kept" INCLUDING DEFAULTS);
--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_staged" ADD CONSTRAINT "k8s_cluster_prices_pk" PRIMARY KEY ("snapshot_id", "cluster_name");
--> statement-breakpoint
INSERT INTO "k8s_cluster_prices_staged" ("snapshot_id", "cluster_name", "currency_code", "price_per_hour", "price_per_month", "price_without_discount_per_month", "discount_percent", "tax_percent", "price_status", "breakdown", "project_id", "region_id", "raw", "tags", "tags_read_only", "tags_original") SELECT "snapshot_id", "cluster_name", "currency_code", "price_per_hour", "price_per_month", "price_without_discount_per_month", "discount_percent", "tax_percent", "price_status", "breakdown", "project_id", "region_id", "raw", "tags", "tags_read_only", "tags_original" FROM "k8s_cluster_prices_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
DELETE FROM "k8s_cluster_prices_kept" k WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.id = k.snapshot_id AND s.complete);
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "k8s_cluster_prices_stage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "k8s_cluster_prices_kept" ("snapshot_id", "cluster_name", "currency_code", "price_per_hour", "price_per_month", "price_without_discount_per_month", "discount_percent", "tax_percent", "price_status", "breakdown", "project_id", "region_id", "raw", "tags", "tags_read_only", "tags_original")
  VALUES (NEW."snapshot_id", NEW."cluster_name", NEW."currency_code", NEW."price_per_hour", NEW."price_per_month", NEW."price_without_discount_per_month", NEW."discount_percent", NEW."tax_percent", NEW."price_status", NEW."breakdown", NEW."project_id", NEW."region_id", NEW."raw", NEW."tags", NEW."tags_read_only", NEW."tags_original");
  RETURN NEW;
END $$;
