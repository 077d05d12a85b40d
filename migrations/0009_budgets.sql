CREATE TABLE "budgets" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "budgets_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"name" text NOT NULL,
	"by" text,
	"value" text,
	"currency" text NOT NULL,
	"amount_per_month" numeric NOT NULL,
	"thresholds" jsonb DEFAULT '[50,80,100]'::jsonb NOT NULL,
	"notify" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"created_by" text NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_by" text NOT NULL,
	"archived_at" timestamp with time zone,
	"archived_by" text,
	CONSTRAINT "budgets_amount_positive" CHECK ("budgets"."amount_per_month" > 0),
	CONSTRAINT "budgets_currency_iso" CHECK ("budgets"."currency" ~ '^[A-Z]{3}$'),
	CONSTRAINT "budgets_group_check" CHECK (("budgets"."by" is null) = ("budgets"."value" is null))
);
--> statement-breakpoint
CREATE UNIQUE INDEX "budgets_active_name_uq" ON "budgets" USING btree (lower("name")) WHERE "budgets"."archived_at" is null;