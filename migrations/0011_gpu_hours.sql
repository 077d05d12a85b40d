ALTER TABLE "cost_daily" ADD COLUMN "gpu_hours" numeric;--> statement-breakpoint
ALTER TABLE "cost_daily" ADD COLUMN "gpu_cost" numeric;--> statement-breakpoint
ALTER TABLE "cost_daily" ADD COLUMN "gpu_unknown_resource_hours" numeric;--> statement-breakpoint
ALTER TABLE "cost_daily_totals" ADD COLUMN "gpu_hours" numeric;--> statement-breakpoint
ALTER TABLE "cost_daily_totals" ADD COLUMN "gpu_cost" numeric;--> statement-breakpoint
ALTER TABLE "cost_daily_totals" ADD COLUMN "gpu_unknown_resource_hours" numeric;--> statement-breakpoint
ALTER TABLE "cost_rollups" ADD COLUMN "gpu_count" integer;--> statement-breakpoint
ALTER TABLE "cost_rollups" ADD COLUMN "gpu_price_per_hour" numeric;--> statement-breakpoint
ALTER TABLE "cost_rollups" ADD COLUMN "gpu_unknown_count" integer;