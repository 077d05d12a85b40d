-- Hand-written: the staged rows of deleted snapshots are now deleted by the code that deletes
-- snapshots (src/db/delete-snapshots.ts). Citus cannot run this trigger on the reference table
-- snapshots ("executor could not find named tuplestore gone"), so it goes on every engine.
DROP TRIGGER IF EXISTS "snapshots_delete_staged" ON "snapshots";--> statement-breakpoint
DROP FUNCTION IF EXISTS "snapshots_delete_staged"();
