/**
 * Synthetic history for the reports benchmark, generated in SQL (generate_series) for speed:
 * hourly runs for the last `hourlyDays` days plus one run per day before that (what retention
 * keeps: hourly detail for a week, then one snapshot per day), over `scopes` project/region
 * scopes with `instances` instances in all. Half the scopes price in EUR, half in USD; one
 * flavor's price is hidden (unpriced); ~5% of instances are stopped; ~10% untagged; team values
 * include variants (`ML`, `ml`, ` ml`); a few instances come and go every hour.
 *
 * Rows are written into the staging tables and folded into `<name>_versions` snapshot by
 * snapshot in time order (foldSnapshot, as a collection's finalising step does), so the reports
 * read the storage real collections leave behind, not rows left staged.
 */
import type { Database } from '../src/db/connection.js';
import { foldSnapshot, VERSIONED_TABLES } from '../src/db/versions.js';
import type { SnapshotKind } from '../src/db/schema.js';

export interface BenchShape {
  instances: number;
  scopes: number;
  hourlyDays: number;
  totalDays: number;
  /** Newest snapshot time (a whole hour). */
  end: Date;
}

export interface ScopeRow {
  scope_key: string;
  project_id: number;
  region_id: number;
}

/** Instances that appear (and disappear) per scope per hour. */
const CHURN_PER_HOUR = 2;

export function snapshotTimes(shape: BenchShape): Date[] {
  const times: Date[] = [];
  const hour = 3600_000;
  for (let h = shape.hourlyDays * 24 - 1; h >= 0; h--) times.push(new Date(shape.end.getTime() - h * hour));
  const firstHourly = times[0]!.getTime();
  for (let d = 1; d <= shape.totalDays - shape.hourlyDays; d++) {
    // The day's last hour, as thinning keeps it.
    times.unshift(new Date(firstHourly - d * 24 * hour));
  }
  return times;
}

export function scopesOf(shape: BenchShape): ScopeRow[] {
  const regions = 2;
  return Array.from({ length: shape.scopes }, (_, i) => {
    const project_id = Math.floor(i / regions) + 1;
    const region_id = (i % regions) + 1;
    return { scope_key: `p${project_id}-r${region_id}`, project_id, region_id };
  });
}

/** Runs and snapshot rows (instance, cluster, k8s_price every run; flavor every 6 h); returns run ids by time. */
export async function generateRunsAndSnapshots(db: Database, shape: BenchShape): Promise<void> {
  const times = snapshotTimes(shape).map((t) => t.toISOString());
  const scopes = scopesOf(shape);
  await db.execute(
    `insert into collection_runs (trigger, collectors, started_at, finished_at, heartbeat_at, status, counts, errors, runner_id)
     select 'schedule', '{instances,clusters,k8s_prices,flavors}', t, t + interval '2 minutes', t + interval '2 minutes', 'succeeded',
       jsonb_build_object('instance', $2::int), '[]'::jsonb, 'bench'
     from unnest($1::timestamptz[]) as t order by t`,
    [times, shape.instances],
  );
  await db.execute(
    `insert into snapshots (run_id, kind, scope_key, project_id, region_id, taken_at, complete, row_count)
     select r.id, k.kind, s.scope_key, s.project_id, s.region_id,
       r.started_at + (k.ord * interval '10 seconds'), true, 0
     from collection_runs r
     cross join unnest($1::text[], $2::int[], $3::int[]) as s(scope_key, project_id, region_id)
     cross join (values ('flavor', 0), ('instance', 1), ('cluster', 2), ('k8s_price', 3)) as k(kind, ord)
     where k.kind <> 'flavor' or extract(hour from r.started_at)::int % 6 = 5 or r.id = (select min(id) from collection_runs)
     order by r.started_at, s.scope_key, k.ord`,
    [scopes.map((s) => s.scope_key), scopes.map((s) => s.project_id), scopes.map((s) => s.region_id)],
  );
}

export async function generateFlavors(db: Database): Promise<void> {
  // Eight flavors; g8-hidden has no price (unpriced); region 2 prices in USD, the others EUR.
  await db.execute(
    `insert into gpu_flavors_staged (snapshot_id, flavor_id, flavor_name, disabled, capacity, currency_code, price_per_hour, price_per_month, price_status,
       resource_class, hardware, project_id, region_id, raw)
     select s.id, 'fid-' || f.name, f.name, f.n = 7, (f.n * 3 + extract(day from s.taken_at)::int) % 11,
       case when f.hidden then null when s.region_id = 2 then 'USD' else 'EUR' end,
       case when f.hidden then null else f.price end,
       case when f.hidden then null else f.price * 730 end,
       case when f.hidden then 'hide' else 'show' end,
       'bm-gpu', jsonb_build_object('gpu', f.n || 'x A100'), s.project_id, s.region_id, jsonb_build_object('flavor_name', f.name)
     from snapshots s
     cross join (values (0, 'g1-small', 0.45::numeric, false), (1, 'g1-medium', 0.9, false), (2, 'g2-large', 1.8, false),
       (3, 'g2-xlarge', 3.6, false), (4, 'g4-a100', 7.25, false), (5, 'g4-h100', 12.5, false), (6, 'g8-hidden', null, true),
       (7, 'g0-legacy', 0.1, false)) as f(n, name, price, hidden)
     where s.kind = 'flavor'`,
  );
}

/** Instance rows of every instance snapshot, one statement per run (progress and bounded statements). */
export async function generateInstances(
  db: Database,
  shape: BenchShape,
  onRun?: (done: number, total: number) => void,
  /** After each run's rows are in: what a collection's finalising step does (rollups, fold). */
  afterRun?: (runId: number) => Promise<void>,
): Promise<void> {
  const perScope = Math.ceil(shape.instances / shape.scopes);
  const runs = await db.query<{ id: number; started_at: Date }>('select id, started_at from collection_runs order by started_at');
  const base = runs[0]!.started_at.getTime();
  for (let i = 0; i < runs.length; i++) {
    const run = runs[i]!;
    const hourIndex = Math.round((run.started_at.getTime() - base) / 3600_000);
    await db.execute(
      `insert into instances_staged (snapshot_id, instance_id, name, status, vm_state, flavor_id, flavor_name, vcpus, ram, project_id, region_id, region,
         created_at, ssh_key_name, security_group_ids, security_group_names, volume_count, tags, tags_read_only, tags_original, raw)
       select s.id, v.id, v.name, v.status, lower(v.status), 'fid-' || v.flavor, v.flavor, 8, 65536, s.project_id, s.region_id, 'region-' || s.region_id,
         $4::timestamptz - (v.n * interval '1 minute'), 'key-' || (v.n % 5), '{sg-default}', '{default}', 1, v.tags, '{}', '[]'::jsonb,
         jsonb_build_object('id', v.id, 'name', v.name, 'status', v.status, 'flavor', jsonb_build_object('flavor_name', v.flavor),
           'fixed_ip_assignments', jsonb_build_array(jsonb_build_object('external', false,
             'ip_address', '10.' || (v.n / 65536 % 256) || '.' || (v.n / 256 % 256) || '.' || (v.n % 256), 'subnet_id', 'subnet-' || s.scope_key)))
       from snapshots s
       cross join lateral (
         select n, s.scope_key || '-i' || lpad(n::text, 7, '0') as id, 'vm-' || n as name,
           case when (n * 7 + $2::int / 24) % 20 = 0 or (n + $2::int) % 500 = 0 then 'SHUTOFF' else 'ACTIVE' end as status,
           (array['g1-small','g1-medium','g2-large','g2-xlarge','g4-a100','g4-h100','g8-hidden','g0-legacy'])[1 + n % 8] as flavor,
           case when n % 10 = 0 then '{}'::jsonb
             else jsonb_build_object(
               'team', (array['ML','ml',' ml','infra','web','data','research'])[1 + n % 7],
               'env', (array['prod','dev','staging'])[1 + n % 3],
               'cost.center', 'cc-' || (n % 13))
             || case when n % 3 = 0 then jsonb_build_object('owner/name', 'user-' || (n % 17), 'Ünïcode key', 'wert ' || (n % 2)) else '{}'::jsonb end
           end as tags
         from generate_series($2::int * ${CHURN_PER_HOUR}, $2::int * ${CHURN_PER_HOUR} + $3::int - 1) as n
       ) v
       where s.run_id = $1 and s.kind = 'instance'`,
      // Creation times from the first run's time: an instance's columns do not change from one hour to the next.
      [run.id, hourIndex, perScope, runs[0]!.started_at.toISOString()],
    );
    await afterRun?.(run.id);
    onRun?.(i + 1, runs.length);
  }
}

/** Five clusters of four servers per scope (one with its servers stopped) and two priced Kubernetes clusters. */
export async function generateClustersAndK8s(db: Database): Promise<void> {
  await db.execute(
    `insert into gpu_clusters_staged (snapshot_id, cluster_id, cluster_name, cluster_status, flavor_name, image_id, project_id, region_id, region,
       created_at, server_count, tags, raw)
     select s.id, s.scope_key || '-c' || c, 'cluster-' || c, 'ACTIVE', (array['g4-a100','g4-h100','g2-large','g8-hidden','g4-a100'])[c],
       'img-1', s.project_id, s.region_id, 'region-' || s.region_id, s.taken_at - interval '40 days', 4,
       case when c = 5 then '{}'::jsonb else jsonb_build_object('team', (array['ML','infra','research','data'])[c]) end,
       jsonb_build_object('cluster_id', s.scope_key || '-c' || c)
     from snapshots s cross join generate_series(1, 5) c where s.kind = 'cluster'`,
  );
  await db.execute(
    `insert into gpu_cluster_servers_staged (snapshot_id, cluster_id, server_id, name, status, vm_state, flavor_name, project_id, region_id, region, tags, raw)
     select c.snapshot_id, c.cluster_id, c.cluster_id || '-s' || n, c.cluster_name || '-' || n,
       case when c.cluster_name = 'cluster-2' then 'SHUTOFF' else 'ACTIVE' end, 'active', c.flavor_name, c.project_id, c.region_id, c.region, c.tags, '{}'::jsonb
     from gpu_clusters c cross join generate_series(1, 4) n`,
  );
  await db.execute(
    `insert into k8s_cluster_prices_staged (snapshot_id, cluster_name, currency_code, price_per_hour, price_per_month, price_without_discount_per_month,
       discount_percent, tax_percent, price_status, breakdown, project_id, region_id, raw)
     select s.id, 'k8s-' || k, case when s.region_id = 2 then 'USD' else 'EUR' end, 1.25 * k, 912.5 * k, 1000 * k, 8.75, 0, 'show',
       jsonb_build_object('instances', jsonb_build_array(jsonb_build_object('currency_code', 'EUR', 'price_per_hour', 1 * k)),
         'publicips', jsonb_build_array(jsonb_build_object('currency_code', 'EUR', 'price_per_hour', 0.05 * k)),
         'volumes', jsonb_build_array(jsonb_build_object('currency_code', 'EUR', 'price_per_hour', 0.2 * k))),
       s.project_id, s.region_id, '{}'::jsonb
     from snapshots s cross join generate_series(1, 2) k where s.kind = 'k8s_price'`,
  );
}

/**
 * First/last seen of every instance that ever appeared, as the collector's presence writer
 * (src/collect/presence.ts) leaves it: an instance still present has last_seen_at NULL, which
 * means its scope's seen_at in resource_presence_scopes (the scope's newest instance snapshot); a
 * gone one has its last seen stored. Rows are inserted in the order the writer adds them: each
 * scope's first collection, then each hour's new instances scope by scope.
 */
export async function generatePresence(db: Database, shape: BenchShape): Promise<void> {
  const perScope = Math.ceil(shape.instances / shape.scopes);
  const runs = await db.query<{ first: Date; last: Date }>('select min(started_at) as first, max(started_at) as last from collection_runs');
  const first = runs[0]!.first;
  const last = runs[0]!.last;
  const hours = Math.round((last.getTime() - first.getTime()) / 3600_000);
  await db.execute(
    `insert into resource_presence (kind, scope_key, resource_id, name, first_seen_at, last_seen_at, gone_at)
     select 'instance', scope_key, resource_id, name, first_seen_at, case when gone_at is not null then last_seen_at end, gone_at
     from (
       select s.scope_key, s.scope_key || '-i' || lpad(n::text, 7, '0') as resource_id, 'vm-' || n as name,
         $1::timestamptz + greatest(0, (n - $4::int + 1) / ${CHURN_PER_HOUR}) * interval '1 hour' as first_seen_at,
         least($2::timestamptz, $1::timestamptz + (n / ${CHURN_PER_HOUR}) * interval '1 hour') as last_seen_at,
         case when n / ${CHURN_PER_HOUR} < $3::int then $1::timestamptz + (n / ${CHURN_PER_HOUR} + 1) * interval '1 hour' end as gone_at, n
       from (select distinct scope_key from snapshots) s
       cross join generate_series(0, $3::int * ${CHURN_PER_HOUR} + $4::int - 1) n) r
     order by first_seen_at, scope_key, n`,
    [first.toISOString(), last.toISOString(), hours, perScope],
  );
  await db.execute(
    `insert into resource_presence_scopes (kind, scope_key, seen_at, snapshot_id)
     select distinct on (scope_key) 'instance', scope_key, taken_at, id
     from snapshots where kind = 'instance' and complete
     order by scope_key, taken_at desc, id desc`,
  );
}

/**
 * Folds the complete, not yet versioned snapshots of `kinds` (of one run, or all) into versions,
 * oldest first, after refreshing the staging tables' statistics (as a collection does before its
 * finalising transaction).
 */
export async function foldSnapshots(db: Database, kinds: readonly SnapshotKind[], runId?: number): Promise<void> {
  for (const table of VERSIONED_TABLES) if (kinds.includes(table.kind)) await db.execute(`ANALYZE "${table.staged}"`);
  const snaps = await db.query<{ id: number; kind: SnapshotKind; scope_key: string; taken_at: Date }>(
    `select id, kind, scope_key, taken_at from snapshots
      where complete and not versioned and kind = any($1::text[]) and ($2::int is null or run_id = $2::int)
      order by taken_at, id`,
    [kinds, runId ?? null],
  );
  // Each snapshot's row_count, as the snapshot writer sets it on completion: its own kind's rows
  // (the first table of the kind: clusters, not their servers).
  for (const kind of new Set(snaps.map((s) => s.kind))) {
    const own = VERSIONED_TABLES.find((t) => t.kind === kind)!;
    await db.execute(
      `update snapshots s set row_count = (select count(*) from "${own.staged}" t where t.snapshot_id = s.id) where s.id = any($1::int[])`,
      [snaps.filter((s) => s.kind === kind).map((s) => s.id)],
    );
  }
  for (const s of snaps) {
    await db.transaction(async (tx) => {
      if (!(await foldSnapshot(tx, { id: s.id, kind: s.kind, scopeKey: s.scope_key, takenAt: s.taken_at })).folded) {
        throw new Error(`bench data: snapshot ${s.id} (${s.kind} ${s.scope_key}) could not be folded`);
      }
    });
  }
}
