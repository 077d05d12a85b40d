CREATE TABLE "cost_daily_closed_days" (
	"day" date PRIMARY KEY NOT NULL,
	"caps" text NOT NULL,
	"reach_secs" integer NOT NULL,
	"closed_at" timestamp with time zone DEFAULT now() NOT NULL
);
