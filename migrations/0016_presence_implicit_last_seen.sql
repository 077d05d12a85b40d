CREATE TABLE "resource_presence_scopes" (
	"kind" text NOT NULL,
	"scope_key" text NOT NULL,
	"seen_at" timestamp with time zone NOT NULL,
	"snapshot_id" integer NOT NULL,
	CONSTRAINT "resource_presence_scopes_pk" PRIMARY KEY("kind","scope_key")
);
--> statement-breakpoint
ALTER TABLE "resource_presence" ALTER COLUMN "last_seen_at" DROP NOT NULL;--> statement-breakpoint
-- Hand-written: presence with the last seen resolved. A row whose last_seen_at is NULL was seen in
-- the latest snapshot of its scope whose presence was written (resource_presence_scopes); rows
-- stored before this migration keep their explicit values and become implicit when next seen.
CREATE VIEW "resource_presence_seen" AS
SELECT p.kind, p.scope_key, p.resource_id, p.name, p.first_seen_at,
       coalesce(p.last_seen_at, sc.seen_at) AS last_seen_at,
       p.gone_at, p.first_snapshot_id,
       CASE WHEN p.last_seen_at IS NULL THEN sc.snapshot_id ELSE p.last_snapshot_id END AS last_snapshot_id
  FROM resource_presence p
  LEFT JOIN resource_presence_scopes sc ON sc.kind = p.kind AND sc.scope_key = p.scope_key;
