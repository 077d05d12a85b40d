-- Every snapshot's finalising transaction updates the last-seen time of every resource it lists:
-- at 100,000 resources collected hourly, that is 100,000 row updates an hour. With free space left
-- on each page, Postgres updates them in place (HOT: no new index entries, pruned on access).
-- Measured on 20,000 instances per snapshot: 2.2-2.6 s per 100,000 at fillfactor 100, 1.2-1.7 s at 60.
-- Existing pages get the free space as they are rewritten (VACUUM FULL or pg_repack to apply at once).
ALTER TABLE "resource_presence" SET (fillfactor = 60);
