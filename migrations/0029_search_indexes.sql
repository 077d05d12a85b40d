-- Global search (src/reports/search.ts) without scanning history: an index per way a resource is
-- found, on each kind's versions. Ids (exact and prefix) by a "C" btree, names (substring) by
-- trigrams, tag values and IP addresses by GIN over arrays built by two immutable functions.
-- pg_trgm is a trusted extension (PostgreSQL 13+): the database owner may create it.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION search_tag_values(tags jsonb) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce(pg_catalog.array_agg(pg_catalog.lower(t.value)), '{}'::text[]) FROM pg_catalog.jsonb_each_text(tags) AS t $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION search_ip_addresses(raw json) RETURNS text[]
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT coalesce(pg_catalog.array_agg(a ->> 'ip_address'), '{}'::text[])
        FROM pg_catalog.json_array_elements(CASE WHEN pg_catalog.json_typeof(raw -> 'fixed_ip_assignments') = 'array' THEN raw -> 'fixed_ip_assignments' ELSE '[]'::json END) AS a $$;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS instances_versions_search_id_idx ON instances_versions ((instance_id COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS instances_versions_search_name_idx ON instances_versions USING gin (lower(name) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS instances_versions_search_tags_idx ON instances_versions USING gin (search_tag_values(tags));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS instances_versions_search_ip_idx ON instances_versions USING gin (search_ip_addresses(raw));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_cluster_servers_versions_search_id_idx ON gpu_cluster_servers_versions ((server_id COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_cluster_servers_versions_search_name_idx ON gpu_cluster_servers_versions USING gin (lower(name) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_cluster_servers_versions_search_tags_idx ON gpu_cluster_servers_versions USING gin (search_tag_values(tags));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_cluster_servers_versions_search_ip_idx ON gpu_cluster_servers_versions USING gin (search_ip_addresses(raw));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_clusters_versions_search_id_idx ON gpu_clusters_versions ((cluster_id COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_clusters_versions_search_name_idx ON gpu_clusters_versions USING gin (lower(cluster_name) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_clusters_versions_search_tags_idx ON gpu_clusters_versions USING gin (search_tag_values(tags));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS instance_ports_versions_search_id_idx ON instance_ports_versions ((port_id COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS instance_ports_versions_search_name_idx ON instance_ports_versions USING gin (lower(name) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS keypairs_versions_search_id_idx ON keypairs_versions ((keypair_id COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS keypairs_versions_search_name_idx ON keypairs_versions USING gin (lower(name) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS storage_ssh_keys_versions_search_id_idx ON storage_ssh_keys_versions (((key_id::text) COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS storage_ssh_keys_versions_search_name_idx ON storage_ssh_keys_versions USING gin (lower(name) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS k8s_cluster_prices_versions_search_name_idx ON k8s_cluster_prices_versions USING gin (lower(cluster_name) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS k8s_cluster_prices_versions_search_id_idx ON k8s_cluster_prices_versions ((cluster_name COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS k8s_cluster_prices_versions_search_tags_idx ON k8s_cluster_prices_versions USING gin (search_tag_values(tags));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS image_tags_versions_search_id_idx ON image_tags_versions (((image_id || '/' || key) COLLATE "C"));
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS image_tags_versions_search_name_idx ON image_tags_versions USING gin (lower(key || '=' || coalesce(value, '')) gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS image_tags_versions_search_value_idx ON image_tags_versions (lower(value));
--> statement-breakpoint
-- Current versions in the search's order, so a common match (a tag value half the company carries) stops after the limit.
CREATE INDEX IF NOT EXISTS instances_versions_search_current_idx ON instances_versions (lower(coalesce(name, '')), instance_id) WHERE valid_to IS NULL;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS gpu_cluster_servers_versions_search_current_idx ON gpu_cluster_servers_versions (lower(coalesce(name, '')), server_id) WHERE valid_to IS NULL;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS instance_ports_versions_search_current_idx ON instance_ports_versions (lower(coalesce(name, '')), port_id) WHERE valid_to IS NULL;
