CREATE TABLE "cost_daily_sealed_days" (
	"day" date PRIMARY KEY NOT NULL,
	"sealed_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "schedule_claims" (
	"key" text PRIMARY KEY NOT NULL,
	"claimed_by" text NOT NULL,
	"claimed_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE INDEX "schedule_claims_expires_at_idx" ON "schedule_claims" USING btree ("expires_at");