-- Stored daily costs become exact: price_per_hour x seconds (and resource-seconds) instead of the
-- cost in currency, which was divided by 3600 per (day, group, scope) and so rounded before it was
-- summed. Readers sum these and divide once. Existing rows are multiplied back by 3600, exactly
-- (each stored figure divided by 3600 gives it again, digit for digit).
ALTER TABLE "cost_daily" RENAME COLUMN "cost" TO "price_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily" RENAME COLUMN "resource_hours" TO "resource_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily" RENAME COLUMN "unpriced_resource_hours" TO "unpriced_resource_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily" RENAME COLUMN "gpu_hours" TO "gpu_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily" RENAME COLUMN "gpu_cost" TO "gpu_price_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily" RENAME COLUMN "gpu_unknown_resource_hours" TO "gpu_unknown_resource_seconds";--> statement-breakpoint
UPDATE "cost_daily" SET "price_seconds" = "price_seconds" * 3600, "resource_seconds" = "resource_seconds" * 3600,
  "unpriced_resource_seconds" = "unpriced_resource_seconds" * 3600, "gpu_seconds" = "gpu_seconds" * 3600,
  "gpu_price_seconds" = "gpu_price_seconds" * 3600, "gpu_unknown_resource_seconds" = "gpu_unknown_resource_seconds" * 3600;--> statement-breakpoint
ALTER TABLE "cost_daily_totals" RENAME COLUMN "cost" TO "price_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily_totals" RENAME COLUMN "resource_hours" TO "resource_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily_totals" RENAME COLUMN "unpriced_resource_hours" TO "unpriced_resource_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily_totals" RENAME COLUMN "gpu_hours" TO "gpu_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily_totals" RENAME COLUMN "gpu_cost" TO "gpu_price_seconds";--> statement-breakpoint
ALTER TABLE "cost_daily_totals" RENAME COLUMN "gpu_unknown_resource_hours" TO "gpu_unknown_resource_seconds";--> statement-breakpoint
UPDATE "cost_daily_totals" SET "price_seconds" = "price_seconds" * 3600, "resource_seconds" = "resource_seconds" * 3600,
  "unpriced_resource_seconds" = "unpriced_resource_seconds" * 3600, "gpu_seconds" = "gpu_seconds" * 3600,
  "gpu_price_seconds" = "gpu_price_seconds" * 3600, "gpu_unknown_resource_seconds" = "gpu_unknown_resource_seconds" * 3600;
