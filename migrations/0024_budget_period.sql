-- Budgets by calendar month, quarter or year: the amount is for one period of the budget.
ALTER TABLE "budgets" RENAME COLUMN "amount_per_month" TO "amount";--> statement-breakpoint
ALTER TABLE "budgets" ADD COLUMN "period" text DEFAULT 'month' NOT NULL;--> statement-breakpoint
ALTER TABLE "budgets" DROP CONSTRAINT "budgets_amount_positive";--> statement-breakpoint
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_amount_positive" CHECK ("budgets"."amount" > 0);--> statement-breakpoint
ALTER TABLE "budgets" ADD CONSTRAINT "budgets_period_check" CHECK ("budgets"."period" in ('month', 'quarter', 'year'));
