CREATE TABLE "cost_daily_coverage" (
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"scope_key" text NOT NULL,
	"covered_secs" numeric NOT NULL,
	CONSTRAINT "cost_daily_coverage_pk" PRIMARY KEY("day","kind","scope_key")
);
--> statement-breakpoint
ALTER TABLE "cost_daily_closed_days" ADD COLUMN "covered_secs" numeric;