-- Hand-written (issue 15): the inventory's first page reads each snapshot's instances in byte
-- order ("C", its tie-break order) and stops after a page. The primary key is in the database's
-- collation, which that order cannot use; valid_from and valid_to are included so that the
-- versions a snapshot does not see are skipped in the index, without reading their rows.
CREATE INDEX "instances_versions_key_c_idx" ON "instances_versions" USING btree ("scope_key", "instance_id" COLLATE "C") INCLUDE ("valid_from", "valid_to");
