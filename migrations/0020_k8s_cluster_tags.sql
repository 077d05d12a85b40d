ALTER TABLE "k8s_cluster_prices_staged" ADD COLUMN "tags" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_staged" ADD COLUMN "tags_read_only" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_staged" ADD COLUMN "tags_original" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_versions" ADD COLUMN "tags" jsonb DEFAULT '{}'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_versions" ADD COLUMN "tags_read_only" text[] DEFAULT '{}'::text[] NOT NULL;--> statement-breakpoint
ALTER TABLE "k8s_cluster_prices_versions" ADD COLUMN "tags_original" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
CREATE INDEX "k8s_cluster_prices_versions_tags_idx" ON "k8s_cluster_prices_versions" USING gin ("tags" jsonb_path_ops);--> statement-breakpoint
-- The view gives the new tag columns (added last: CREATE OR REPLACE VIEW may only append columns).
CREATE OR REPLACE VIEW "k8s_cluster_prices" AS
SELECT s.id AS snapshot_id, r."cluster_name", r."currency_code", r."price_per_hour", r."price_per_month", r."price_without_discount_per_month", r."discount_percent", r."tax_percent", r."price_status", r."breakdown", r."project_id", r."region_id", r."raw", r."tags", r."tags_read_only", r."tags_original"
  FROM snapshots s
  CROSS JOIN LATERAL (
    SELECT v."cluster_name", v."currency_code", v."price_per_hour", v."price_per_month", v."price_without_discount_per_month", v."discount_percent", v."tax_percent", v."price_status", v."breakdown", v."project_id", v."region_id", v."raw", v."tags", v."tags_read_only", v."tags_original"
      FROM "k8s_cluster_prices_versions" v
     WHERE s.versioned AND s.kind = 'k8s_price' AND v.scope_key = s.scope_key
       AND coalesce(v.valid_to, 'infinity'::timestamptz) > s.taken_at AND v.valid_from <= s.taken_at
    UNION ALL
    SELECT t."cluster_name", t."currency_code", t."price_per_hour", t."price_per_month", t."price_without_discount_per_month", t."discount_percent", t."tax_percent", t."price_status", t."breakdown", t."project_id", t."region_id", t."raw", t."tags", t."tags_read_only", t."tags_original" FROM "k8s_cluster_prices_staged" t WHERE t.snapshot_id = s.id
  ) r;
