-- Hand-written (issue 15): the rows of a snapshot are read through a LATERAL subquery per snapshot
-- instead of one UNION ALL of (snapshots JOIN versions) and the staged rows. A UNION ALL of joins is
-- planned on its own, so a report joining the view to a few snapshots (its latest ones, from a CTE)
-- could not push the snapshot into it: Postgres expanded every version against every snapshot that
-- saw it (2.5 million rows for 100,000 instances after two days) and then kept 100,000. Now the view
-- is snapshots joined laterally, which the planner flattens into the report's query: snapshot by
-- id, then an index range over the scope's versions (or the staged rows). Same columns, same rows
-- (staged rows hang on their snapshot whatever its kind, as before; versions need the kind).
CREATE OR REPLACE VIEW "gpu_clusters" AS
SELECT s.id AS snapshot_id, r."cluster_id", r."cluster_name", r."cluster_status", r."task_status", r."flavor_name", r."image_id", r."image_name", r."project_id", r."region_id", r."region", r."created_at", r."ssh_key_name", r."server_count", r."tags", r."tags_read_only", r."tags_original", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."cluster_id", v."cluster_name", v."cluster_status", v."task_status", v."flavor_name", v."image_id", v."image_name", v."project_id", v."region_id", v."region", v."created_at", v."ssh_key_name", v."server_count", v."tags", v."tags_read_only", v."tags_original", v."raw"
      FROM "gpu_clusters_versions" v
     WHERE s.versioned AND s.kind = 'cluster' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."cluster_id", t."cluster_name", t."cluster_status", t."task_status", t."flavor_name", t."image_id", t."image_name", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."server_count", t."tags", t."tags_read_only", t."tags_original", t."raw" FROM "gpu_clusters_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "gpu_cluster_servers" AS
SELECT s.id AS snapshot_id, r."cluster_id", r."server_id", r."name", r."status", r."vm_state", r."flavor_id", r."flavor_name", r."resource_class", r."project_id", r."region_id", r."region", r."created_at", r."ssh_key_name", r."tags", r."tags_read_only", r."tags_original", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."cluster_id", v."server_id", v."name", v."status", v."vm_state", v."flavor_id", v."flavor_name", v."resource_class", v."project_id", v."region_id", v."region", v."created_at", v."ssh_key_name", v."tags", v."tags_read_only", v."tags_original", v."raw"
      FROM "gpu_cluster_servers_versions" v
     WHERE s.versioned AND s.kind = 'cluster' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."cluster_id", t."server_id", t."name", t."status", t."vm_state", t."flavor_id", t."flavor_name", t."resource_class", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."tags", t."tags_read_only", t."tags_original", t."raw" FROM "gpu_cluster_servers_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "instances" AS
SELECT s.id AS snapshot_id, r."instance_id", r."name", r."description", r."status", r."vm_state", r."task_state", r."flavor_id", r."flavor_name", r."vcpus", r."ram", r."project_id", r."region_id", r."region", r."created_at", r."ssh_key_name", r."security_group_ids", r."security_group_names", r."volume_count", r."tags", r."tags_read_only", r."tags_original", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."instance_id", v."name", v."description", v."status", v."vm_state", v."task_state", v."flavor_id", v."flavor_name", v."vcpus", v."ram", v."project_id", v."region_id", v."region", v."created_at", v."ssh_key_name", v."security_group_ids", v."security_group_names", v."volume_count", v."tags", v."tags_read_only", v."tags_original", v."raw"
      FROM "instances_versions" v
     WHERE s.versioned AND s.kind = 'instance' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."instance_id", t."name", t."description", t."status", t."vm_state", t."task_state", t."flavor_id", t."flavor_name", t."vcpus", t."ram", t."project_id", t."region_id", t."region", t."created_at", t."ssh_key_name", t."security_group_ids", t."security_group_names", t."volume_count", t."tags", t."tags_read_only", t."tags_original", t."raw" FROM "instances_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "instance_ports" AS
SELECT s.id AS snapshot_id, r."instance_id", r."port_id", r."name", r."security_groups", r."project_id", r."region_id", r."raw", r."read_at"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."instance_id", v."port_id", v."name", v."security_groups", v."project_id", v."region_id", v."raw", v."read_at"
      FROM "instance_ports_versions" v
     WHERE s.versioned AND s.kind = 'port' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."instance_id", t."port_id", t."name", t."security_groups", t."project_id", t."region_id", t."raw", t."read_at" FROM "instance_ports_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "keypairs" AS
SELECT s.id AS snapshot_id, r."keypair_id", r."name", r."fingerprint", r."state", r."shared_in_project", r."project_id", r."region_id", r."created_at", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."keypair_id", v."name", v."fingerprint", v."state", v."shared_in_project", v."project_id", v."region_id", v."created_at", v."raw"
      FROM "keypairs_versions" v
     WHERE s.versioned AND s.kind = 'keypair' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."keypair_id", t."name", t."fingerprint", t."state", t."shared_in_project", t."project_id", t."region_id", t."created_at", t."raw" FROM "keypairs_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "storage_ssh_keys" AS
SELECT s.id AS snapshot_id, r."key_id", r."name", r."created_at", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."key_id", v."name", v."created_at", v."raw"
      FROM "storage_ssh_keys_versions" v
     WHERE s.versioned AND s.kind = 'storage_key' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."key_id", t."name", t."created_at", t."raw" FROM "storage_ssh_keys_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "image_tags" AS
SELECT s.id AS snapshot_id, r."image_id", r."key", r."value", r."read_only", r."project_id", r."region_id", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."image_id", v."key", v."value", v."read_only", v."project_id", v."region_id", v."raw"
      FROM "image_tags_versions" v
     WHERE s.versioned AND s.kind = 'image_tag' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."image_id", t."key", t."value", t."read_only", t."project_id", t."region_id", t."raw" FROM "image_tags_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "free_features" AS
SELECT s.id AS snapshot_id, r."activation_id", r."client_id", r."feature_id", r."feature_name", r."feature_service", r."is_free", r."created_at", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."activation_id", v."client_id", v."feature_id", v."feature_name", v."feature_service", v."is_free", v."created_at", v."raw"
      FROM "free_features_versions" v
     WHERE s.versioned AND s.kind = 'free_feature' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."activation_id", t."client_id", t."feature_id", t."feature_name", t."feature_service", t."is_free", t."created_at", t."raw" FROM "free_features_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "gpu_flavors" AS
SELECT s.id AS snapshot_id, r."flavor_id", r."flavor_name", r."disabled", r."capacity", r."currency_code", r."price_per_hour", r."price_per_month", r."price_status", r."resource_class", r."hardware", r."project_id", r."region_id", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."flavor_id", v."flavor_name", v."disabled", v."capacity", v."currency_code", v."price_per_hour", v."price_per_month", v."price_status", v."resource_class", v."hardware", v."project_id", v."region_id", v."raw"
      FROM "gpu_flavors_versions" v
     WHERE s.versioned AND s.kind = 'flavor' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."flavor_id", t."flavor_name", t."disabled", t."capacity", t."currency_code", t."price_per_hour", t."price_per_month", t."price_status", t."resource_class", t."hardware", t."project_id", t."region_id", t."raw" FROM "gpu_flavors_staged" t WHERE t.snapshot_id = s.id
  ) r;
--> statement-breakpoint
CREATE OR REPLACE VIEW "k8s_cluster_prices" AS
SELECT s.id AS snapshot_id, r."cluster_name", r."currency_code", r."price_per_hour", r."price_per_month", r."price_without_discount_per_month", r."discount_percent", r."tax_percent", r."price_status", r."breakdown", r."project_id", r."region_id", r."raw"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."cluster_name", v."currency_code", v."price_per_hour", v."price_per_month", v."price_without_discount_per_month", v."discount_percent", v."tax_percent", v."price_status", v."breakdown", v."project_id", v."region_id", v."raw"
      FROM "k8s_cluster_prices_versions" v
     WHERE s.versioned AND s.kind = 'k8s_price' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."cluster_name", t."currency_code", t."price_per_hour", t."price_per_month", t."price_without_discount_per_month", t."discount_percent", t."tax_percent", t."price_status", t."breakdown", t."project_id", t."region_id", t."raw" FROM "k8s_cluster_prices_staged" t WHERE t.snapshot_id = s.id
  ) r;
