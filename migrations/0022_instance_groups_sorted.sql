-- An instance's security groups are a set. Collections before this one stored them in the order
-- the group pages finished, so the same instance could read as "changed" between two collections.
-- Collections now store them sorted; the history already stored is put in the same order.
UPDATE "instances_versions"
   SET "security_group_ids" = ARRAY(SELECT g FROM unnest("security_group_ids") AS g ORDER BY g)
 WHERE cardinality("security_group_ids") > 1
   AND "security_group_ids" <> ARRAY(SELECT g FROM unnest("security_group_ids") AS g ORDER BY g);
