ALTER TABLE "auth_sessions" ADD COLUMN "method" text DEFAULT 'password' NOT NULL;--> statement-breakpoint
ALTER TABLE "auth_sessions" ADD COLUMN "role" text;--> statement-breakpoint
ALTER TABLE "auth_sessions" ADD COLUMN "scope" jsonb;