CREATE TABLE "auth_sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"user_name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "scheduled_stops" (
	"id" integer PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "scheduled_stops_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 2147483647 START WITH 1 CACHE 1),
	"instance_id" text NOT NULL,
	"project_id" integer NOT NULL,
	"region_id" integer NOT NULL,
	"instance_name" text,
	"owner" text,
	"reason" text NOT NULL,
	"created_by" text NOT NULL,
	"created_by_role" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"due_at" timestamp with time zone NOT NULL,
	"status" text DEFAULT 'pending' NOT NULL,
	"claimed_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"cancelled_by" text,
	"cancelled_at" timestamp with time zone,
	"result" text,
	"error" text,
	"audit_id" bigint,
	"notices" jsonb DEFAULT '[]'::jsonb NOT NULL,
	CONSTRAINT "scheduled_stops_status_check" CHECK ("scheduled_stops"."status" in ('pending', 'running', 'done', 'failed', 'cancelled'))
);
--> statement-breakpoint
CREATE INDEX "auth_sessions_expires_idx" ON "auth_sessions" USING btree ("expires_at");--> statement-breakpoint
CREATE UNIQUE INDEX "scheduled_stops_one_open_uq" ON "scheduled_stops" USING btree ("instance_id","project_id","region_id") WHERE "scheduled_stops"."status" in ('pending', 'running');--> statement-breakpoint
CREATE INDEX "scheduled_stops_due_idx" ON "scheduled_stops" USING btree ("due_at") WHERE "scheduled_stops"."status" = 'pending';--> statement-breakpoint
CREATE VIEW "public"."instance_status_overrides" AS (
  select distinct on (a.instance_id, a.project_id, a.region_id)
    a.instance_id, a.project_id, a.region_id, 'SHUTOFF'::text as status, a.at as changed_at, a.id as audit_id
  from audit_log a
  where a.action = 'stop' and not a.dry_run and a.result = 'stopped'
    and a.instance_id is not null and a.project_id is not null and a.region_id is not null
    and not exists (
      select 1 from snapshots s
      where s.complete and s.kind in ('instance', 'cluster')
        and s.scope_key = 'p' || a.project_id || '-r' || a.region_id
        and s.taken_at > a.at
        and (exists (select 1 from instances i where i.snapshot_id = s.id and i.instance_id = a.instance_id)
          or exists (select 1 from gpu_cluster_servers g where g.snapshot_id = s.id and g.server_id = a.instance_id))
    )
  order by a.instance_id, a.project_id, a.region_id, a.at desc, a.id desc
);