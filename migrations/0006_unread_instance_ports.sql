CREATE TABLE "unread_instance_ports" (
	"snapshot_id" integer NOT NULL,
	"instance_id" text NOT NULL,
	"status" integer,
	"error" text NOT NULL,
	CONSTRAINT "unread_instance_ports_pk" PRIMARY KEY("snapshot_id","instance_id")
);
--> statement-breakpoint
ALTER TABLE "instance_ports" ADD COLUMN "read_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "unread_instance_ports" ADD CONSTRAINT "unread_instance_ports_snapshot_id_snapshots_id_fk" FOREIGN KEY ("snapshot_id") REFERENCES "public"."snapshots"("id") ON DELETE cascade ON UPDATE no action;