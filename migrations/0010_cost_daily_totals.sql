CREATE TABLE "cost_daily_totals" (
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"dimension" text NOT NULL,
	"group_value" text NOT NULL,
	"currency" text,
	"cost" numeric NOT NULL,
	"resource_hours" numeric NOT NULL,
	"unpriced_resource_hours" numeric NOT NULL,
	CONSTRAINT "cost_daily_totals_uq" UNIQUE NULLS NOT DISTINCT("dimension","day","kind","group_value","currency")
);
--> statement-breakpoint
CREATE TABLE "cost_daily_totals_days" (
	"day" date PRIMARY KEY NOT NULL,
	"source_at" timestamp with time zone NOT NULL
);
