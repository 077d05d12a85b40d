-- Hand-written: a stop through cloudtally counts until the instance (or cluster server) is seen
-- again after it, now read from its presence (last seen) instead of searching every later
-- snapshot's rows through the versions views. The same answer: presence is written in the
-- transaction that completes each snapshot. Citus plans this form (a local audit_log joined to
-- sharded presence); it cannot plan the correlated subqueries over the views.
CREATE OR REPLACE VIEW "instance_status_overrides" AS select distinct on (a.instance_id, a.project_id, a.region_id)
    a.instance_id, a.project_id, a.region_id, 'SHUTOFF'::text as status, a.at as changed_at, a.id as audit_id
  from audit_log a
  left join resource_presence_seen p
    on p.kind in ('instance', 'cluster_server') and p.scope_key = 'p' || a.project_id || '-r' || a.region_id
      and p.resource_id = a.instance_id and p.last_seen_at > a.at
  where a.action = 'stop' and not a.dry_run and a.result = 'stopped'
    and a.instance_id is not null and a.project_id is not null and a.region_id is not null
    and p.resource_id is null
  order by a.instance_id, a.project_id, a.region_id, a.at desc, a.id desc;
