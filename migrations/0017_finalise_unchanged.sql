CREATE TABLE "resource_presence_scopes" (
	"kind" text NOT NULL,
	"scope_key" text NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"snapshot_id" integer NOT NULL,
	CONSTRAINT "resource_presence_scopes_pk" PRIMARY KEY("kind","scope_key")
);
--> statement-breakpoint
ALTER TABLE "free_features_staged" DROP CONSTRAINT "free_features_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "gpu_cluster_servers_staged" DROP CONSTRAINT "gpu_cluster_servers_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "gpu_clusters_staged" DROP CONSTRAINT "gpu_clusters_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "gpu_flavors_staged" DROP CONSTRAINT "gpu_flavors_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "image_tags_staged" DROP CONSTRAINT "image_tags_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "instance_ports_staged" DROP CONSTRAINT "instance_ports_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "instances_staged" DROP CONSTRAINT "instances_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_staged" DROP CONSTRAINT "k8s_cluster_prices_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "keypairs_staged" DROP CONSTRAINT "keypairs_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "storage_ssh_keys_staged" DROP CONSTRAINT "storage_ssh_keys_staged_snapshot_id_snapshots_id_fk";
--> statement-breakpoint
ALTER TABLE "resource_presence" ALTER COLUMN "last_seen_at" DROP NOT NULL;--> statement-breakpoint
-- Hand-written: the staged rows go with their snapshot, as the foreign keys' ON DELETE CASCADE did
-- (one statement trigger per DELETE on snapshots, instead of a check per COPYed row).
CREATE FUNCTION "snapshots_delete_staged"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "gpu_clusters_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "gpu_cluster_servers_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "instances_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "instance_ports_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "keypairs_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "storage_ssh_keys_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "image_tags_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "free_features_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "gpu_flavors_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  DELETE FROM "k8s_cluster_prices_staged" WHERE snapshot_id IN (SELECT id FROM gone);
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER "snapshots_delete_staged" AFTER DELETE ON "snapshots" REFERENCING OLD TABLE AS gone
  FOR EACH STATEMENT EXECUTE FUNCTION "snapshots_delete_staged"();--> statement-breakpoint
-- Hand-written: presence with the last seen resolved. A row whose last_seen_at is NULL was seen in
-- the latest snapshot of its scope whose presence was written (resource_presence_scopes); rows
-- stored before this migration keep their explicit values and become implicit when next seen.
CREATE VIEW "resource_presence_seen" AS
SELECT p.kind, p.scope_key, p.resource_id, p.name, p.first_seen_at,
       coalesce(p.last_seen_at, sc.seen_at) AS last_seen_at,
       p.gone_at, p.first_snapshot_id,
       CASE WHEN p.last_seen_at IS NULL THEN sc.snapshot_id ELSE p.last_snapshot_id END AS last_snapshot_id
  FROM resource_presence p
  LEFT JOIN resource_presence_scopes sc ON sc.kind = p.kind AND sc.scope_key = p.scope_key;
