CREATE TABLE "demo_company" (
	"id" boolean PRIMARY KEY DEFAULT true NOT NULL,
	"state" text NOT NULL,
	"saved_at" timestamp with time zone NOT NULL,
	CONSTRAINT "demo_company_one_row" CHECK ("demo_company"."id")
);
