/**
 * The cost model: what a resource costs per hour, the per-snapshot rollups, and the cost per day.
 *
 * Rules (README "Cost model"):
 * - An instance's hourly price is the GPU flavor price of its scope, matched by flavor_name
 *   (fallback: flavor_id), from the latest complete flavor snapshot of the scope taken at or
 *   before the instance snapshot (failing that, the flavor snapshot of the same run).
 * - A bare metal cluster costs its flavor's price x the number of its servers that run. A cluster
 *   whose servers are not listed (legacy responses) has an unknown price.
 * - A Kubernetes cluster costs the `total_price` of the pricing endpoint.
 * - Only running resources cost: instances and cluster servers whose status (or vm_state when the
 *   status is missing) is ACTIVE. A cluster runs when one of its servers does (or, servers not
 *   listed, when its cluster_status is ACTIVE). Priced Kubernetes clusters always count as running.
 * - Every resource is counted (running or not); stopped ones cost 0 in their currency's row.
 *   A resource whose price is unknown (no matching flavor, hidden price, no currency) goes into the
 *   row with currency NULL and is counted in unpriced_count: never priced at zero.
 * - Monthly price = the flavor's price_per_month when given, else price_per_hour x 730; an hourly
 *   price missing while the monthly one is given is price_per_month / 730.
 * - Currency codes are upper-cased; amounts in different currencies are never added together.
 *
 * All sums run in SQL on numeric; nothing is rounded here.
 */
import cron from 'node-cron';
import type { Database, Queryable } from './connection.js';
import { gpuCountSql } from './gpu-count.js';
import { withLocalSettings } from './local-settings.js';
import { UNTAGGED } from './schema.js';
import { sameContentSql, versionedTable } from './versions.js';

/** Snapshot kinds that carry cost. */
export const PRICED_KINDS = ['instance', 'cluster', 'k8s_price'] as const;
export type PricedKind = (typeof PRICED_KINDS)[number];

/** Hours in the month used to turn an hourly price into a monthly one (the provider's own factor). */
export const HOURS_PER_MONTH = 730;

/** Longest time (hours) one snapshot's run-rate is assumed to hold, per priced kind. */
export type GapCaps = Record<PricedKind, number>;

/** 2 x the default schedules: instances and clusters hourly, Kubernetes prices every 6 hours. */
export const DEFAULT_MAX_GAP_HOURS: Readonly<GapCaps> = Object.freeze({ instance: 2, cluster: 2, k8s_price: 12 });

/** Dimensions written for every priced snapshot, besides `tag:<key>`. */
export const FIXED_DIMENSIONS = ['project', 'region', 'kind', 'flavor', 'state'] as const;
export type FixedDimension = (typeof FIXED_DIMENSIONS)[number];

export const TAG_DIMENSION_PREFIX = 'tag:';
/** Group of the `state` dimension for resources that run (and cost) / that do not. */
export const STATE_RUNNING = 'running';
export const STATE_STOPPED = 'stopped';
/** Group of the flavor / project / region dimensions when the resource has none. */
export const NO_VALUE = '(none)';

const sqlText = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** Running = status (or vm_state when status is empty) is ACTIVE, case-insensitively. */
export function runningSql(status: string, vmState: string): string {
  return `(upper(trim(coalesce(nullif(trim(${status}), ''), ${vmState}, ''))) = 'ACTIVE')`;
}

/**
 * The flavor snapshot that prices a resource snapshot `s` (a relation alias with scope_key,
 * taken_at and run_id): the latest complete flavor snapshot of the same scope taken at or before
 * it, else the complete one of the same run (a run may finish its flavors a moment after its
 * instances).
 */
export function flavorSnapshotSql(s: string): string {
  return `coalesce(
      (select f.id from snapshots f
        where f.complete and f.kind = 'flavor' and f.scope_key = ${s}.scope_key and f.taken_at <= ${s}.taken_at
        order by f.taken_at desc limit 1),
      (select f.id from snapshots f
        where f.complete and f.kind = 'flavor' and f.scope_key = ${s}.scope_key and f.run_id = ${s}.run_id
        order by f.taken_at limit 1))`;
}

/** Columns every branch of pricedResourcesSql yields, in this order. */
export const PRICED_RESOURCE_COLUMNS = [
  'snapshot_id',
  'taken_at',
  'kind',
  'scope_key',
  'resource_id',
  'name',
  'project_id',
  'region_id',
  'region_name',
  'status',
  'running',
  'flavor',
  'tags',
  'created_at',
  'ssh_key_name',
  'servers_total',
  'currency',
  'unit_price_per_hour',
  'unit_price_per_month',
  'quantity',
  'price_per_hour',
  'price_per_month',
  /** GPUs per unit from the flavor's hardware description (db/gpu-count.ts); NULL = cannot be read. */
  'gpus',
] as const;

/**
 * SQL (a SELECT, no trailing semicolon) of every resource of the snapshots in relation `snaps`
 * (columns id, kind, scope_key, project_id, region_id, taken_at, run_id) with its price:
 * currency NULL = unknown price (then unit price and prices are NULL); price_per_hour is the
 * current run-rate (unit price x running quantity: 0 when not running). `snaps` must be a
 * relation name or a parenthesised subquery written by code, never by user input.
 */
export function pricedResourcesSql(
  snaps: string,
  kinds: readonly PricedKind[] = PRICED_KINDS,
  /** Only the instances listed in this relation (scope_key, instance_id), each read by its key. */
  opts: { instanceIds?: string } = {},
): string {
  const branches: string[] = [];
  if (kinds.includes('instance')) branches.push(instanceBranch(snaps, opts.instanceIds));
  if (kinds.includes('cluster')) branches.push(clusterBranch(snaps));
  if (kinds.includes('k8s_price')) branches.push(k8sBranch(snaps));
  if (branches.length === 0) throw new Error('pricedResourcesSql: no kinds');
  return branches.join('\nunion all\n');
}

interface PriceInputs {
  currency: string;
  hour: string;
  month: string;
  quantity: string;
  /** Further condition for the price to count as known. */
  alsoKnownWhen?: string;
}

/**
 * The price columns: currency (upper-cased) only when an hourly or monthly price is known; the
 * hourly price falls back to monthly / 730 and the monthly to hourly x 730.
 */
function priceColumns(p: PriceInputs): string {
  const currency = `nullif(upper(trim(${p.currency})), '')`;
  const hour = `coalesce(${p.hour}, ${p.month} / ${HOURS_PER_MONTH})`;
  const month = `coalesce(${p.month}, ${p.hour} * ${HOURS_PER_MONTH})`;
  const known = `(${currency} is not null and ${hour} is not null${p.alsoKnownWhen ? ` and ${p.alsoKnownWhen}` : ''})`;
  return `case when ${known} then ${currency} end as currency,
    case when ${known} then ${hour} end as unit_price_per_hour,
    case when ${known} then ${month} end as unit_price_per_month,
    ${p.quantity} as quantity,
    case when ${known} then ${hour} * ${p.quantity} end as price_per_hour,
    case when ${known} then ${month} * ${p.quantity} end as price_per_month,
    null::int as gpus`;
}

/**
 * A flavor's price fields normalised once per flavor row (not per resource): currency upper-cased
 * (NULL when blank), hourly price falling back to monthly / 730 and monthly to hourly x 730, and
 * whether the price is known (both a currency and an hourly price).
 */
function normalisedFlavorFields(g: string): Record<'currency' | 'hour' | 'month' | 'known' | 'gpus', string> {
  const currency = `nullif(upper(trim(${g}.currency_code)), '')`;
  const hour = `coalesce(${g}.price_per_hour, ${g}.price_per_month / ${HOURS_PER_MONTH})`;
  return {
    currency,
    hour,
    month: `coalesce(${g}.price_per_month, ${g}.price_per_hour * ${HOURS_PER_MONTH})`,
    known: `(${currency} is not null and ${hour} is not null)`,
    gpus: gpuCountSql(`${g}.hardware->>'gpu'`),
  };
}

/** The matched flavor's fields after flavorLookupSql: `fx` (by name), else `fy` (by id). */
export const LOOKED_UP_FLAVOR = {
  known: 'coalesce(fx.known, fy.known, false)',
  currency: 'coalesce(fx.currency, fy.currency)',
  hour: 'coalesce(fx.hour, fy.hour)',
  month: 'coalesce(fx.month, fy.month)',
} as const;

/**
 * Price columns of a resource from its matched flavor: `fx` (by name) or else `fy` (by id, joined
 * only when the name matched none); unknown price = NULL currency and prices, never zero.
 */
function flavorPrices(quantity: string, alsoKnownWhen?: string): string {
  const f = LOOKED_UP_FLAVOR;
  const known = `(${f.known}${alsoKnownWhen ? ` and ${alsoKnownWhen}` : ''})`;
  return `case when ${known} then ${f.currency} end as currency,
    case when ${known} then ${f.hour} end as unit_price_per_hour,
    case when ${known} then ${f.month} end as unit_price_per_month,
    ${quantity} as quantity,
    case when ${known} then ${f.hour} * ${quantity} end as price_per_hour,
    case when ${known} then ${f.month} * ${quantity} end as price_per_month,
    coalesce(fx.gpus, fy.gpus) as gpus`;
}

/**
 * The resource snapshots of one kind from `snaps`, each with the flavor snapshot that prices it
 * and that snapshot's catalogue as two small jsonb maps: `flavors_by_name` (duplicate names resolve
 * to the lowest flavor_id: jsonb keeps the last of equal keys, and they are aggregated by
 * flavor_id descending) and `flavors_by_id`, each value the normalised price fields.
 *
 * Why maps rather than joins: a resource's price is then a key lookup in its own snapshot's row,
 * so the plan no longer depends on estimates. Joined as subqueries over the versions views, the
 * catalogues were estimated at one row and every resource row scanned all of them in a nested
 * loop (100,000 instances: 1.1-1.7 s per join instead of milliseconds). Numbers keep their exact
 * numeric value through jsonb. OFFSET 0 computes all this once per snapshot, not per resource.
 */
function snapshotsWithFlavors(snaps: string, kind: PricedKind): string {
  return `(select s.*, fm.flavors_by_name, fm.flavors_by_id
    from (select s0.*, ${flavorSnapshotSql('s0')} as flavor_snapshot_id from ${snaps} s0 where s0.kind = '${kind}' offset 0) s
    ${flavorCatalogueSql('fm', 's.flavor_snapshot_id')}
    offset 0)`;
}

/**
 * The catalogue of flavor snapshot `snapshotExpr` as lateral `alias` with the two maps
 * flavors_by_name and flavors_by_id (see snapshotsWithFlavors); look prices up with
 * flavorLookupSql.
 */
export function flavorCatalogueSql(alias: string, snapshotExpr: string): string {
  const fields = normalisedFlavorFields('g');
  const entry = `jsonb_build_object(${Object.entries(fields)
    .map(([name, expr]) => `'${name}', ${expr}`)
    .join(', ')}, 'flavor_name', g.flavor_name)`;
  return `left join lateral (
      select jsonb_object_agg(g.flavor_name, e.entry order by g.flavor_id desc) filter (where g.flavor_name is not null) as flavors_by_name,
             jsonb_object_agg(g.flavor_id::text, e.entry) filter (where g.flavor_id is not null) as flavors_by_id
        from gpu_flavors g cross join lateral (select ${entry} as entry) e
       where g.snapshot_id = ${snapshotExpr}) ${alias} on true`;
}

/**
 * A resource's flavor in catalogue maps (of relation `maps`, see flavorCatalogueSql): laterals
 * `fx` (the flavor named `nameExpr`, the lowest flavor_id among duplicate names) and else `fy`
 * (the one whose id is `idExpr`), each with currency, hour, month (normalised), known, gpus.
 */
export function flavorLookupSql(maps: string, nameExpr: string, idExpr: string): string {
  return `${flavorEntry('fx', `${maps}.flavors_by_name -> (${nameExpr})`)}
  ${flavorEntry('fy', `case when fx.matched is null then ${maps}.flavors_by_id -> (${idExpr})::text end`)}`;
}

/** The price fields of a catalogue entry (jsonb) as typed columns, as lateral `alias`; no row when `entry` is NULL. */
function flavorEntry(alias: string, entry: string): string {
  return `left join lateral (
      select true as matched, e.j->>'flavor_name' as flavor_name, e.j->>'currency' as currency,
        (e.j->>'hour')::numeric as hour, (e.j->>'month')::numeric as month,
        (e.j->>'known')::boolean as known, (e.j->>'gpus')::int as gpus
      from (select ${entry} as j) e where e.j is not null) ${alias} on true`;
}

function instanceBranch(snaps: string, ids?: string): string {
  const running = runningSql('i.status', 'i.vm_state');
  return `select i.snapshot_id, s.taken_at, 'instance'::text as kind, s.scope_key, i.instance_id as resource_id, i.name,
    coalesce(i.project_id, s.project_id) as project_id, coalesce(i.region_id, s.region_id) as region_id, i.region as region_name,
    coalesce(nullif(trim(i.status), ''), i.vm_state) as status, ${running} as running,
    coalesce(i.flavor_name, fy.flavor_name, i.flavor_id, ${sqlText(NO_VALUE)}) as flavor, i.tags, i.created_at,
    i.ssh_key_name, null::int as servers_total,
    ${flavorPrices(`case when ${running} then 1 else 0 end`)}
  from ${snapshotsWithFlavors(snaps, 'instance')} s
  ${ids ? listedInstancesSql(ids) : 'join instances i on i.snapshot_id = s.id'}
  ${flavorLookupSql('s', 'i.flavor_name', 'i.flavor_id')}`;
}

/**
 * The instance rows `i` of snapshot `s` listed in `ids` (scope_key, instance_id), each read by its
 * key: OFFSET 0 keeps the lateral a probe per listed id; flattened, the planner read every row of
 * each snapshot instead (guessing the snapshots smaller than the list) and kept the listed ones.
 */
function listedInstancesSql(ids: string): string {
  return `join ${ids} ids on ids.scope_key = s.scope_key
  cross join lateral (select * from instances i0 where i0.snapshot_id = s.id and i0.instance_id = ids.instance_id offset 0) i`;
}

function clusterBranch(snaps: string): string {
  // A cluster whose servers were not listed runs when its cluster_status is ACTIVE; its price is
  // unknown (how many servers run is unknown), so `known` also requires listed servers.
  const running = `(coalesce(sv.active, 0) > 0 or (coalesce(sv.total, 0) = 0 and upper(trim(coalesce(c.cluster_status, ''))) = 'ACTIVE'))`;
  return `select c.snapshot_id, s.taken_at, 'cluster'::text as kind, s.scope_key, c.cluster_id as resource_id, c.cluster_name as name,
    coalesce(c.project_id, s.project_id) as project_id, coalesce(c.region_id, s.region_id) as region_id, c.region as region_name,
    c.cluster_status as status, ${running} as running,
    coalesce(c.flavor_name, ${sqlText(NO_VALUE)}) as flavor, c.tags, c.created_at,
    c.ssh_key_name, coalesce(sv.total, 0) as servers_total,
    ${flavorPrices('coalesce(sv.active, 0)', 'coalesce(sv.total, 0) > 0')}
  from ${snapshotsWithFlavors(snaps, 'cluster')} s
  join gpu_clusters c on c.snapshot_id = s.id
  left join lateral (
    select count(*)::int as total, (count(*) filter (where ${runningSql('v.status', 'v.vm_state')}))::int as active
    from gpu_cluster_servers v where v.snapshot_id = c.snapshot_id and v.cluster_id = c.cluster_id) sv on true
  ${flavorLookupSql('s', 'c.flavor_name', 'c.flavor_name')}`;
}

function k8sBranch(snaps: string): string {
  return `select k.snapshot_id, s.taken_at, 'k8s_price'::text as kind, s.scope_key, k.cluster_name as resource_id, k.cluster_name as name,
    coalesce(k.project_id, s.project_id) as project_id, coalesce(k.region_id, s.region_id) as region_id, null::text as region_name,
    -- price_status (show / hide) says whether the price is visible, not how the cluster runs.
    null::text as status, true as running,
    ${sqlText(NO_VALUE)}::text as flavor, '{}'::jsonb as tags, null::timestamptz as created_at,
    null::text as ssh_key_name, null::int as servers_total,
    ${priceColumns({ currency: 'k.currency_code', hour: 'k.price_per_hour', month: 'k.price_per_month', quantity: '1' })}
  from ${snaps} s
  join k8s_cluster_prices k on k.snapshot_id = s.id
  where s.kind = 'k8s_price'`;
}

/**
 * Writes cost_rollups rows for one complete priced snapshot (kind instance, cluster or k8s_price),
 * using the latest complete flavor snapshot of the same scope taken at or before it. Idempotent
 * (deletes then inserts). Dimensions: project, region, kind, flavor, state (running / stopped),
 * and `tag:<key>` for every tag key present among the snapshot's resources, resources lacking the
 * key in the `(untagged)` group. Call it inside the transaction that completes the snapshot (it
 * does not check `complete`, so it can run just before the flag is set).
 */
export async function computeCostRollups(q: Queryable, snapshotId: number): Promise<void> {
  const found = await q.query<{ kind: string }>('select kind from snapshots where id = $1', [snapshotId]);
  const kind = found[0]?.kind;
  if (kind === undefined) throw new Error(`computeCostRollups: snapshot ${snapshotId} does not exist`);
  if (!(PRICED_KINDS as readonly string[]).includes(kind)) {
    throw new Error(`computeCostRollups: snapshot ${snapshotId} is of kind ${kind}, which carries no cost (expected ${PRICED_KINDS.join(', ')})`);
  }
  await inTransaction(q, async (tx) => {
    await tx.execute('delete from cost_rollups where snapshot_id = $1', [snapshotId]);
    // The planner hashes grouping sets only when it expects the hash tables to fit in work_mem,
    // and it expects one group per resource (it cannot know how many share a tag set): with the
    // default 4 MB it sorts every resource row instead, several times slower.
    await withLocalSettings(tx, { work_mem: '64MB' }, () => tx.execute(rollupInsertSql(kind as PricedKind), [snapshotId, UNTAGGED]));
    await reopenDaysAffectedBy(tx, snapshotId);
  });
}

/**
 * Writes the cost rollups of a complete priced snapshot (computeCostRollups), or copies them from
 * `sameRowsAs` (the previous snapshot of its kind and scope, holding exactly the same rows: see
 * foldSnapshot) when nothing else they depend on differs either: the same project and region, and
 * a flavor catalogue of the same content pricing both. Rollups are a function of those inputs
 * alone, so the copy equals what computing would give, for the cost of copying a few hundred
 * rows instead of pricing and grouping every resource. Rollups written before GPUs were counted
 * are never copied. Returns which was done.
 */
export async function writeCostRollups(q: Queryable, snapshotId: number, sameRowsAs: number | null): Promise<'copied' | 'computed'> {
  if (sameRowsAs === null || !(await samePricingInputs(q, snapshotId, sameRowsAs))) {
    await computeCostRollups(q, snapshotId);
    return 'computed';
  }
  await inTransaction(q, async (tx) => {
    await tx.execute('delete from cost_rollups where snapshot_id = $1', [snapshotId]);
    await tx.execute(
      `insert into cost_rollups (snapshot_id, taken_at, kind, scope_key, project_id, region_id, dimension, group_value, currency,
         price_per_hour, price_per_month, resource_count, unpriced_count, gpu_count, gpu_price_per_hour, gpu_unknown_count)
       select s.id, s.taken_at, s.kind, s.scope_key, s.project_id, s.region_id, r.dimension, r.group_value, r.currency,
         r.price_per_hour, r.price_per_month, r.resource_count, r.unpriced_count, r.gpu_count, r.gpu_price_per_hour, r.gpu_unknown_count
         from cost_rollups r cross join snapshots s
        where r.snapshot_id = $2 and s.id = $1`,
      [snapshotId, sameRowsAs],
    );
    await reopenDaysAffectedBy(tx, snapshotId);
  });
  return 'copied';
}

/**
 * Whether snapshots `a` and `b` (holding the same rows) price alike: same kind, scope, project and
 * region, flavor catalogues of the same content (the same snapshot, or rows equal one by one),
 * and b's rollups all written with GPU figures.
 */
async function samePricingInputs(q: Queryable, a: number, b: number): Promise<boolean> {
  const flavors = versionedTable('gpu_flavors');
  const [row] = await q.query<{ same: boolean }>(
    `with s as (select s.*, ${flavorSnapshotSql('s')} as flavor_snapshot_id from snapshots s where s.id in ($1, $2)),
     a as (select * from s where id = $1),
     b as (select * from s where id = $2)
     select exists (
       select 1 from a join b on a.kind = b.kind and a.scope_key = b.scope_key
         and a.project_id is not distinct from b.project_id and a.region_id is not distinct from b.region_id
        where (a.flavor_snapshot_id is not distinct from b.flavor_snapshot_id
               or ((select count(*) from gpu_flavors where snapshot_id = a.flavor_snapshot_id)
                     = (select count(*) from gpu_flavors where snapshot_id = b.flavor_snapshot_id)
                   and not exists (
                     select 1 from gpu_flavors x where x.snapshot_id = a.flavor_snapshot_id
                        and not exists (select 1 from gpu_flavors y where y.snapshot_id = b.flavor_snapshot_id
                                           and y.flavor_id = x.flavor_id and ${sameContentSql(flavors, 'x', 'y')}))))
          and not exists (select 1 from cost_rollups r where r.snapshot_id = $2 and r.gpu_count is null)
     ) as same`,
    [a, b],
  );
  return row!.same;
}

/**
 * Re-opens the closed days whose figures the snapshot's rates change (so reports integrate them
 * live again until closeCompleteDays closes them anew): a snapshot taken at T holds from T (and
 * cuts the previous one's rate at T) for at most the cap, so it affects the days that overlap
 * [T, T + cap). A backdated snapshot (the demo backfill, a late collection) lands here.
 */
async function reopenDaysAffectedBy(tx: Queryable, snapshotId: number): Promise<void> {
  await tx.execute(
    `delete from cost_daily_closed_days c using snapshots s
      where s.id = $1
        and (c.day + 1)::timestamp at time zone 'UTC' > s.taken_at
        and c.day::timestamp at time zone 'UTC' < s.taken_at + make_interval(secs => c.reach_secs)`,
    [snapshotId],
  );
}

/** The gap caps (seconds per priced kind) a closed day was computed with, as stored in cost_daily_closed_days.caps. */
function capsKey(params: readonly unknown[]): string {
  return `instance=${params[2]},cluster=${params[3]},k8s_price=${params[4]}`;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Closes every complete UTC day not closed yet (or closed under other gap caps) and not sealed:
 * computes its cost_daily rows with refreshCostDaily (the very integration reports do live) and
 * records it in cost_daily_closed_days with its cost_daily_totals, one transaction per day. A day is complete once it
 * has ended: a rate still running (the newest snapshot's, until `now`, capped) is cut at the day's
 * end like any other, so `now` no longer matters to it; a snapshot written later that affects it
 * (a late or backdated collection: taken at T, it changes [T, T + cap)) re-opens it
 * (computeCostRollups, reopenDaysAffectedBy). So yesterday is read from cost_daily from the first
 * run after midnight, not from noon (the longest cap, Kubernetes prices' 12 h, used to be waited for).
 * Then writes the totals still missing for sealed and closed days (sumStoredDays). Returns
 * the days closed. Cheap when nothing is left to close or sum (two queries). Aborting stops
 * between days.
 */
export async function closeCompleteDays(db: Database, opts: CostOverTimeOptions & { signal?: AbortSignal } = {}): Promise<string[]> {
  const now = opts.now ?? new Date();
  const params = pieceParams('2000-01-01', '2000-01-01', { ...opts, now });
  const caps = capsKey(params);
  const reachSecs = Math.max(params[2] as number, params[3] as number, params[4] as number);
  const lastDay = new Date(Math.floor(now.getTime() / DAY_MS) * DAY_MS - DAY_MS).toISOString().slice(0, 10);
  const kinds = PRICED_KINDS.map(sqlText).join(', ');
  const open = await db.query<{ day: string }>(
    `select to_char(d, 'YYYY-MM-DD') as day
       from generate_series(
         (select min(taken_at at time zone 'UTC')::date from snapshots where complete and kind in (${kinds})),
         $1::date, interval '1 day') d
      where d::date not in (select day from cost_daily_sealed_days)
        and d::date not in (select day from cost_daily_closed_days where caps = $2)
      order by d`,
    [lastDay, caps],
  );
  const closed: string[] = [];
  for (const { day } of open) {
    if (opts.signal?.aborted) break;
    await db.transaction(async (tx) => {
      // Waits for snapshot writers that are re-opening days (and makes them wait), so a day is
      // never closed from figures that miss a snapshot committed meanwhile.
      await tx.execute('lock table cost_daily_closed_days in share row exclusive mode');
      if ((await tx.query('select 1 from cost_daily_sealed_days where day = $1::date', [day])).length > 0) return;
      await refreshCostDaily(tx, { fromDay: day, toDay: day }, { ...opts, now });
      await tx.execute(
        `insert into cost_daily_closed_days (day, caps, reach_secs, closed_at) values ($1::date, $2, $3, now())
         on conflict (day) do update set caps = excluded.caps, reach_secs = excluded.reach_secs, closed_at = excluded.closed_at`,
        [day, caps, reachSecs],
      );
      await writeDailyTotals(tx, [day]);
      closed.push(day);
    });
  }
  if (!opts.signal?.aborted) await sumStoredDays(db, caps, opts.signal);
  return closed;
}

/** Most days whose totals one transaction of sumStoredDays writes. */
const TOTALS_BATCH_DAYS = 31;

/**
 * Writes the missing cost_daily_totals of the sealed days and of the days closed under `caps`
 * (days stored before the totals existed, or whose stamp no longer matches), a batch of days per
 * transaction. Cheap when none is missing (one query).
 */
async function sumStoredDays(db: Database, caps: string, signal?: AbortSignal): Promise<void> {
  const missing = await db.query<{ day: string }>(
    `select to_char(d.day, 'YYYY-MM-DD') as day
       from (select day from cost_daily_sealed_days union select day from cost_daily_closed_days where caps = $1) d
      where not exists (select 1 from cost_daily_totals_days t where t.day = d.day and t.source_at = ${STORED_AT_SQL('d.day')})
      order by d.day`,
    [caps],
  );
  for (let i = 0; i < missing.length && !signal?.aborted; i += TOTALS_BATCH_DAYS) {
    const days = missing.slice(i, i + TOTALS_BATCH_DAYS).map((r) => r.day);
    await db.transaction(async (tx) => {
      // As closing does: a day being closed or re-opened meanwhile waits (or is waited for).
      await tx.execute('lock table cost_daily_closed_days in share row exclusive mode');
      await writeDailyTotals(tx, days);
    });
  }
}

/**
 * SQL of the stamp of the cost_daily rows of `day` (an SQL expression): sealed_at when the day is
 * sealed (sealed days win), else closed_at when it is closed, else NULL.
 */
const STORED_AT_SQL = (day: string) =>
  `coalesce((select s.sealed_at from cost_daily_sealed_days s where s.day = ${day}), (select c.closed_at from cost_daily_closed_days c where c.day = ${day}))`;

/**
 * Rewrites cost_daily_totals for `days` ('YYYY-MM-DD') from their cost_daily rows, and stamps
 * each sealed or closed one of them with the sealed_at / closed_at of those rows (days neither
 * sealed nor closed get no stamp: readers integrate them live anyway). Call it in the transaction
 * that writes their cost_daily rows and seals or closes them, after doing so.
 */
export async function writeDailyTotals(q: Queryable, days: readonly string[]): Promise<void> {
  if (days.length === 0) return;
  await inTransaction(q, async (tx) => {
    await tx.execute('delete from cost_daily_totals_days where day = any($1::date[])', [days]);
    await tx.execute('delete from cost_daily_totals where day = any($1::date[])', [days]);
    // The (untagged) rule of the readers (see costOverDaysSql), applied here once per day: for
    // every tag dimension present on the day, the `kind` rows (totals) of each (kind, scope)
    // without a row of it count as (untagged).
    await tx.execute(
      `with d as (
        select day, kind, scope_key, dimension, group_value, currency, cost, resource_hours, unpriced_resource_hours,
          gpu_hours, gpu_cost, gpu_unknown_resource_hours
        from cost_daily where day = any($1::date[])
      ),
      tag_dims as (select distinct day, dimension from d where dimension like 'tag:%'),
      parts as (
        select day, kind, dimension, group_value, currency, cost, resource_hours, unpriced_resource_hours, gpu_hours, gpu_cost, gpu_unknown_resource_hours from d
        union all
        select k.day, k.kind, t.dimension, $2::text, k.currency, k.cost, k.resource_hours, k.unpriced_resource_hours, k.gpu_hours, k.gpu_cost, k.gpu_unknown_resource_hours
        from d k join tag_dims t on t.day = k.day
        where k.dimension = 'kind'
          and not exists (select 1 from cost_daily x where x.day = k.day and x.dimension = t.dimension and x.kind = k.kind and x.scope_key = k.scope_key)
      )
      insert into cost_daily_totals (day, kind, dimension, group_value, currency, cost, resource_hours, unpriced_resource_hours,
        gpu_hours, gpu_cost, gpu_unknown_resource_hours)
      select day, kind, dimension, group_value, currency, sum(cost), sum(resource_hours), sum(unpriced_resource_hours),
        -- GPU figures are unknown (NULL) for a group when any of its rows predates GPU counting.
        case when bool_and(gpu_hours is not null) then sum(gpu_hours) end,
        case when bool_and(gpu_hours is not null) then sum(gpu_cost) end,
        case when bool_and(gpu_hours is not null) then sum(gpu_unknown_resource_hours) end
      from parts group by day, kind, dimension, group_value, currency
      -- Stored in the order readers fetch them (a dimension's groups of one day side by side).
      order by dimension, day, kind, group_value, currency`,
      [days, UNTAGGED],
    );
    await tx.execute(
      `insert into cost_daily_totals_days (day, source_at)
       select u.day, ${STORED_AT_SQL('u.day')} from unnest($1::date[]) as u(day)
       where ${STORED_AT_SQL('u.day')} is not null`,
      [days],
    );
  });
}

/** Runs fn in a transaction: the caller's, when q is one; else a new one. (JIT is off for every connection: db/connection.ts.) */
export async function inTransaction<T>(q: Queryable, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return isDatabase(q) ? q.transaction(fn) : fn(q);
}

function isDatabase(q: Queryable): q is Database {
  return typeof (q as Partial<Database>).transaction === 'function';
}

/**
 * One pass over the snapshot's priced resources aggregates them two ways at once (grouping
 * sets): per (currency, running, project, region, kind, flavor) for the fixed dimensions, and
 * per (currency, tag set), usually a few thousand rows out of 100,000, from which the tag
 * dimensions are summed. A tag key's `(untagged)` group is the snapshot's total minus what
 * carries the key, per currency (exact: numeric subtraction).
 */
function rollupInsertSql(kind: PricedKind): string {
  const state = `case when c.running then ${sqlText(STATE_RUNNING)} else ${sqlText(STATE_STOPPED)} end`;
  return `with s as materialized (
    select id, kind, scope_key, project_id, region_id, taken_at, run_id from snapshots where id = $1
  ),
  sets as materialized (
    select grouping(r.tags) = 1 as fixed_set, r.currency, r.running, r.project_id, r.region_id, r.kind, r.flavor, r.tags,
      coalesce(sum(r.price_per_hour), 0) as h, coalesce(sum(r.price_per_month), 0) as m, count(*)::int as n,
      coalesce(sum(r.gpus * r.quantity), 0)::int as gn, coalesce(sum(r.price_per_hour) filter (where r.gpus > 0), 0) as gh,
      (count(*) filter (where r.gpus is null and r.quantity > 0))::int as gu
    from (${pricedResourcesSql('s', [kind])}) r
    group by grouping sets ((r.currency, r.running, r.project_id, r.region_id, r.kind, r.flavor), (r.currency, r.tags))
  ),
  fixed as (
    select d.dimension, d.group_value, c.currency, sum(c.h) as h, sum(c.m) as m, sum(c.n)::int as n, sum(c.gn)::int as gn, sum(c.gh) as gh, sum(c.gu)::int as gu
    from sets c cross join lateral (values
      ('project', coalesce(c.project_id::text, ${sqlText(NO_VALUE)})),
      ('region', coalesce(c.region_id::text, ${sqlText(NO_VALUE)})),
      ('kind', c.kind),
      ('flavor', c.flavor),
      ('state', ${state})
    ) as d(dimension, group_value)
    where c.fixed_set
    group by d.dimension, d.group_value, c.currency
  ),
  tagged as materialized (
    select ${sqlText(TAG_DIMENSION_PREFIX)} || t.key as dimension, t.value as group_value, c.currency,
      sum(c.h) as h, sum(c.m) as m, sum(c.n)::int as n, sum(c.gn)::int as gn, sum(c.gh) as gh, sum(c.gu)::int as gu
    from sets c cross join lateral jsonb_each_text(c.tags) as t(key, value)
    where not c.fixed_set
    group by t.key, t.value, c.currency
  ),
  totals as (select currency, sum(h) as h, sum(m) as m, sum(n)::int as n, sum(gn)::int as gn, sum(gh) as gh, sum(gu)::int as gu from sets where fixed_set group by currency),
  with_key as (
    select dimension, currency, sum(h) as h, sum(m) as m, sum(n)::int as n, sum(gn)::int as gn, sum(gh) as gh, sum(gu)::int as gu
    from tagged group by dimension, currency
  ),
  untagged as (
    select k.dimension, $2::text as group_value, t.currency,
      t.h - coalesce(w.h, 0) as h, t.m - coalesce(w.m, 0) as m, t.n - coalesce(w.n, 0) as n,
      t.gn - coalesce(w.gn, 0) as gn, t.gh - coalesce(w.gh, 0) as gh, t.gu - coalesce(w.gu, 0) as gu
    from (select distinct dimension from tagged) k
    cross join totals t
    left join with_key w on w.dimension = k.dimension and w.currency is not distinct from t.currency
    where t.n - coalesce(w.n, 0) > 0
  ),
  g as (select * from fixed union all select * from tagged union all select * from untagged)
  insert into cost_rollups (snapshot_id, taken_at, kind, scope_key, project_id, region_id, dimension, group_value, currency,
    price_per_hour, price_per_month, resource_count, unpriced_count, gpu_count, gpu_price_per_hour, gpu_unknown_count)
  select s.id, s.taken_at, s.kind, s.scope_key, s.project_id, s.region_id, g.dimension, g.group_value, g.currency,
    g.h, g.m, g.n, case when g.currency is null then g.n else 0 end, g.gn, g.gh, g.gu
  from g cross join s`;
}

// ---------------------------------------------------------------------------------------------
// Gap caps from the collection schedules.

/**
 * The longest time between two runs of a cron schedule, in hours (exact for schedules that fire
 * every day; for day-restricted ones an upper bound: a week, or a month).
 */
export function cronGapHours(expression: string): number {
  const fields = cron.parse(expression);
  const everyDay = fields.dayOfMonth.length >= 31 && fields.month.length >= 12 && fields.dayOfWeek.length >= 7;
  if (!everyDay) return fields.dayOfMonth.length >= 31 && fields.month.length >= 12 ? 7 * 24 : 31 * 24;
  const minutes = [...new Set(fields.hour.flatMap((h) => fields.minute.map((m) => h * 60 + m)))].sort((a, b) => a - b);
  if (minutes.length === 0) return 24;
  let gap = minutes[0]! + 1440 - minutes[minutes.length - 1]!;
  for (let i = 1; i < minutes.length; i++) gap = Math.max(gap, minutes[i]! - minutes[i - 1]!);
  // A sub-minute schedule (six fields) still gives at most one snapshot a minute in practice.
  return gap / 60;
}

/** Caps of 2 x each priced collector's schedule (config.schedules). */
export function maxGapHoursForSchedules(schedules: { readonly instances: string; readonly clusters: string; readonly k8s_prices: string }): GapCaps {
  return {
    instance: 2 * cronGapHours(schedules.instances),
    cluster: 2 * cronGapHours(schedules.clusters),
    k8s_price: 2 * cronGapHours(schedules.k8s_prices),
  };
}

/** The caps of a configuration: its costMaxGapHours for every kind, else 2 x each schedule. */
export function gapCapsFor(config: {
  readonly costMaxGapHours: number | null;
  readonly schedules: { readonly instances: string; readonly clusters: string; readonly k8s_prices: string };
}): number | GapCaps {
  return config.costMaxGapHours ?? maxGapHoursForSchedules(config.schedules);
}

function resolveCaps(maxGapHours: number | Partial<GapCaps> | undefined): GapCaps {
  const caps: GapCaps =
    typeof maxGapHours === 'number'
      ? { instance: maxGapHours, cluster: maxGapHours, k8s_price: maxGapHours }
      : { ...DEFAULT_MAX_GAP_HOURS, ...(maxGapHours ?? {}) };
  for (const [kind, hours] of Object.entries(caps)) {
    if (!Number.isFinite(hours) || hours <= 0) throw new Error(`maxGapHours for ${kind} must be a positive number of hours (got ${hours})`);
  }
  return caps;
}

// ---------------------------------------------------------------------------------------------
// Integration over time: cost per UTC day.

export interface CostOverTimeOptions {
  /**
   * Longest time one snapshot's run-rate is assumed to hold: one number for every kind, or per
   * kind (default DEFAULT_MAX_GAP_HOURS: 2 x the default schedules).
   */
  maxGapHours?: number | Partial<GapCaps>;
  /** End of the open interval after the newest snapshot of each (kind, scope) (default: the real time). */
  now?: Date;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function checkDayRange(fn: string, fromDay: string, toDay: string): void {
  const valid = (d: string) => DAY.test(d) && !Number.isNaN(Date.parse(`${d}T00:00:00Z`));
  if (!valid(fromDay) || !valid(toDay)) {
    throw new Error(`${fn}: fromDay and toDay must be dates YYYY-MM-DD (got ${JSON.stringify(fromDay)}, ${JSON.stringify(toDay)})`);
  }
  if (fromDay > toDay) throw new Error(`${fn}: fromDay ${fromDay} is after toDay ${toDay}`);
}

/**
 * CTE text (`live_from`, `win`, `intervals`, `pieces`) cutting the complete priced snapshots' run-rates into
 * per-UTC-day pieces for days [$1, $2] not sealed: each snapshot's rate holds from its taken_at
 * until the next complete snapshot of the same (kind, scope), at most the kind's cap ($3 instance,
 * $4 cluster, $5 k8s_price, in seconds); the newest until $6 (now), capped alike.
 */
function piecesCte(storedDays: string): string {
  const kinds = PRICED_KINDS.map(sqlText).join(', ');
  const cap = `make_interval(secs => (case kind when 'instance' then $3::int when 'cluster' then $4::int else $5::int end))`;
  // Pieces are only ever made for days not in `storedDays` (a relation with a column day): snapshots
  // that end before the first such day (their rate holds at most the cap) are not read at all, so a
  // year of stored history costs nothing here.
  return `live_from as (
    select min(d)::date as day from generate_series($1::date, $2::date, interval '1 day') d
    where d::date not in (select day from ${storedDays})
  ),
  win as (
    select id, kind, scope_key, project_id, region_id, taken_at,
      lead(taken_at) over (partition by kind, scope_key order by taken_at, id) as next_at
    from snapshots
    where complete and kind in (${kinds})
      and taken_at >= (select day from live_from) - make_interval(secs => greatest($3::int, $4::int, $5::int))
      and taken_at < $2::date + 1 + make_interval(secs => greatest($3::int, $4::int, $5::int))
  ),
  intervals as (
    select w.*, least(coalesce(w.next_at, $6::timestamptz), w.taken_at + ${cap}) as end_at from win w
  ),
  pieces as materialized (
    select iv.id, iv.kind, iv.scope_key, iv.project_id, iv.region_id, iv.taken_at, d.day::date as day,
      extract(epoch from least(iv.end_at, d.day + interval '1 day') - greatest(iv.taken_at, d.day)) as secs
    from intervals iv
    cross join lateral generate_series(date_trunc('day', iv.taken_at), iv.end_at - interval '1 microsecond', interval '1 day') as d(day)
    where iv.end_at > iv.taken_at
      and d.day::date between $1::date and $2::date
      and d.day::date not in (select day from ${storedDays})
  )`;
}

/** The taken_at range of the snapshots piecesCte reads (for bounding rollup reads by the dimension/time index). */
const WINDOW_TIME_RANGE = `r.taken_at >= (select day from live_from) - make_interval(secs => greatest($3::int, $4::int, $5::int))
  and r.taken_at < $2::date + 1 + make_interval(secs => greatest($3::int, $4::int, $5::int))`;

function pieceParams(fromDay: string, toDay: string, opts: CostOverTimeOptions): unknown[] {
  const caps = resolveCaps(opts.maxGapHours);
  const secs = (h: number) => Math.round(h * 3600);
  return [fromDay, toDay, secs(caps.instance), secs(caps.cluster), secs(caps.k8s_price), (opts.now ?? new Date()).toISOString()];
}

/**
 * Recomputes cost_daily for [fromDay, toDay] (UTC dates 'YYYY-MM-DD') from cost_rollups.
 * Idempotent. Each complete priced snapshot's run-rate holds from its taken_at until the next
 * complete snapshot of the same (kind, scope), but never longer than maxGapHours (a gap is capped,
 * not extrapolated); the newest holds until `now`, capped alike. Intervals are split at UTC
 * midnight. A tag dimension that some snapshots of a (kind, scope) in the range lack counts those
 * snapshots' resources as `(untagged)` (readers treat a day without the dimension the same way).
 * Days recorded in cost_daily_sealed_days are left alone (their detail has been thinned;
 * recomputing them would undercount).
 */
export async function refreshCostDaily(
  q: Queryable,
  range: { fromDay: string; toDay: string },
  opts: CostOverTimeOptions = {},
): Promise<void> {
  checkDayRange('refreshCostDaily', range.fromDay, range.toDay);
  const params = pieceParams(range.fromDay, range.toDay, opts);
  await inTransaction(q, async (tx) => {
    await tx.execute(
      'delete from cost_daily where day between $1::date and $2::date and day not in (select day from cost_daily_sealed_days)',
      params.slice(0, 2),
    );
    await tx.execute(
      `with ${piecesCte('cost_daily_sealed_days')},
      tag_dims as (
        select distinct p.kind, p.scope_key, r.dimension
        from pieces p join cost_rollups r on r.snapshot_id = p.id
        where r.dimension like 'tag:%'
      ),
      effective as (
        select p.kind, p.scope_key, p.project_id, p.region_id, p.day, p.secs,
          r.dimension, r.group_value, r.currency, r.price_per_hour, r.resource_count, r.unpriced_count, r.gpu_count, r.gpu_price_per_hour, r.gpu_unknown_count
        from pieces p join cost_rollups r on r.snapshot_id = p.id
        union all
        select p.kind, p.scope_key, p.project_id, p.region_id, p.day, p.secs,
          t.dimension, $7, k.currency, k.price_per_hour, k.resource_count, k.unpriced_count, k.gpu_count, k.gpu_price_per_hour, k.gpu_unknown_count
        from pieces p
        join tag_dims t on t.kind = p.kind and t.scope_key = p.scope_key
        join cost_rollups k on k.snapshot_id = p.id and k.dimension = 'kind'
        where not exists (select 1 from cost_rollups x where x.snapshot_id = p.id and x.dimension = t.dimension)
      )
      insert into cost_daily (day, kind, scope_key, project_id, region_id, dimension, group_value, currency,
        cost, resource_hours, unpriced_resource_hours, max_resource_count, gpu_hours, gpu_cost, gpu_unknown_resource_hours, computed_at)
      select e.day, e.kind, e.scope_key, max(e.project_id), max(e.region_id), e.dimension, e.group_value, e.currency,
        trim_scale(sum(e.price_per_hour * e.secs) / 3600), trim_scale(sum(e.resource_count * e.secs) / 3600), trim_scale(sum(e.unpriced_count * e.secs) / 3600),
        max(e.resource_count), ${gpuSums('e')}, now()
      from effective e
      group by e.day, e.kind, e.scope_key, e.dimension, e.group_value, e.currency`,
      [...params, UNTAGGED],
    );
  });
}

/**
 * GPU-hours, their cost and the hours of resources with an unreadable GPU count, integrated over
 * the pieces `e` (columns gpu_count, gpu_price_per_hour, gpu_unknown_count, secs): NULL when a
 * rollup predates GPU counting (its GPUs are unknown, never 0).
 */
function gpuSums(e: string): string {
  const known = `bool_and(${e}.gpu_count is not null)`;
  return `case when ${known} then trim_scale(sum(${e}.gpu_count * ${e}.secs) / 3600) end as gpu_hours,
    case when ${known} then trim_scale(sum(${e}.gpu_price_per_hour * ${e}.secs) / 3600) end as gpu_cost,
    case when ${known} then trim_scale(sum(${e}.gpu_unknown_count * ${e}.secs) / 3600) end as gpu_unknown_resource_hours`;
}

// ---------------------------------------------------------------------------------------------
// Reading rollups and daily costs for one dimension (the reports' side of the same rules).

/**
 * SQL of the rollup rows of dimension `dimParam` for the snapshots in relation `snaps` (columns
 * id at least), with the `(untagged)` rule applied at read time: a snapshot without any row of a
 * tag dimension (none of its resources carries the key) contributes its `kind` rows (its
 * totals) as `(untagged)`. Columns: snapshot_id, taken_at, kind, scope_key, project_id,
 * region_id, group_value, currency, price_per_hour, price_per_month, resource_count,
 * unpriced_count, then the `passThrough` columns of `snaps`. `untaggedParam` binds UNTAGGED.
 */
export function effectiveRollupsSql(
  snaps: string,
  dimParam: string,
  untaggedParam: string,
  passThrough: readonly string[] = [],
  /** Extra SQL condition on the rollup rows `r` (e.g. a taken_at range, so the dimension/time index bounds the read). */
  alsoWhere = 'true',
): string {
  const cols = ['r.snapshot_id', 'r.taken_at', 'r.kind', 'r.scope_key', 'r.project_id', 'r.region_id', ...passThrough.map((c) => `sn.${c}`)].join(', ');
  // Rollup rows without a currency hold the unpriced resources: their amounts are unknown, so
  // NULL (sums stay NULL: "n/a"), never the 0 the rollup stores.
  const values = `r.currency, case when r.currency is not null then r.price_per_hour end as price_per_hour,
    case when r.currency is not null then r.price_per_month end as price_per_month, r.resource_count, r.unpriced_count,
    r.gpu_count, case when r.currency is not null then r.gpu_price_per_hour end as gpu_price_per_hour, r.gpu_unknown_count`;
  return `select ${cols}, r.group_value, ${values}
    from cost_rollups r join ${snaps} sn on sn.id = r.snapshot_id
    where r.dimension = ${dimParam} and ${alsoWhere}
    union all
    select ${cols}, ${untaggedParam}::text, ${values}
    from cost_rollups r join ${snaps} sn on sn.id = r.snapshot_id
    where r.dimension = 'kind' and left(${dimParam}, 4) = 'tag:' and ${alsoWhere}
      and not exists (select 1 from cost_rollups x where x.snapshot_id = r.snapshot_id and x.dimension = ${dimParam})`;
}

export interface DailyCostRow {
  day: string;
  group_value: string;
  currency: string | null;
  /** Price integrated over the day (exact decimal text); NULL for the rows without a currency. */
  cost: string | null;
  resource_hours: string;
  unpriced_resource_hours: string;
  /** GPU-hours of the resources whose GPU count can be read; NULL when not counted on some day (before GPU counting). */
  gpu_hours: string | null;
  /** Cost of those resources (NULL for the rows without a currency). */
  gpu_cost: string | null;
  /** Hours of running resources whose GPU count cannot be read. */
  gpu_unknown_resource_hours: string | null;
}

export interface DailyCostQuery extends CostOverTimeOptions {
  fromDay: string;
  toDay: string;
  /** `project`, `region`, `kind`, `flavor`, `state` or `tag:<normalised key>`. */
  dimension: string;
  /** Only this priced kind / project / region. */
  kind?: PricedKind;
  projectId?: number;
  regionId?: number;
}

/**
 * Cost per UTC day, group and currency over [fromDay, toDay] for one dimension: sealed days from
 * cost_daily (their detail may be gone), every other day integrated live from cost_rollups with
 * the same rules as refreshCostDaily (so it is right whether or not cost_daily was refreshed).
 */
export async function dailyCosts(q: Queryable, query: DailyCostQuery): Promise<DailyCostRow[]> {
  checkDayRange('dailyCosts', query.fromDay, query.toDay);
  const rows = await q.query<DailyCostRow & { bucket: string } & Record<string, unknown>>(costOverDaysSql('day'), costOverDaysParams(query));
  return rows.map(({ bucket, ...r }) => ({ ...r, day: bucket }));
}

/** How costOverDays sums the days: per day (YYYY-MM-DD), per calendar month (YYYY-MM) or all together (''). */
export type CostBucket = 'day' | 'month' | 'all';

export interface BucketCostRow {
  /** The day, the month, or '' for the whole range. */
  bucket: string;
  group_value: string;
  currency: string | null;
  cost: string | null;
  resource_hours: string;
  unpriced_resource_hours: string;
  /** GPU-hours of the resources whose GPU count can be read; NULL when not counted on some day (before GPU counting). */
  gpu_hours: string | null;
  /** Cost of those resources (NULL for the rows without a currency). */
  gpu_cost: string | null;
  /** Hours of running resources whose GPU count cannot be read. */
  gpu_unknown_resource_hours: string | null;
}

/**
 * The same figures as dailyCosts summed per month or over the whole range in SQL (so a year is
 * a few rows per group, not one per day): sealed days from cost_daily, the others integrated live.
 */
export async function costOverDays(q: Queryable, query: DailyCostQuery, bucket: CostBucket): Promise<BucketCostRow[]> {
  checkDayRange('costOverDays', query.fromDay, query.toDay);
  return q.query<BucketCostRow & Record<string, unknown>>(costOverDaysSql(bucket), costOverDaysParams(query));
}

function costOverDaysParams(query: DailyCostQuery): unknown[] {
  const params = pieceParams(query.fromDay, query.toDay, query);
  return [...params, query.dimension, UNTAGGED, query.kind ?? null, query.projectId ?? null, query.regionId ?? null, capsKey(params)];
}

const BUCKET_SQL: Record<CostBucket, string> = {
  day: `to_char(day, 'YYYY-MM-DD')`,
  month: `to_char(day, 'YYYY-MM')`,
  all: `''::text`,
};

/** The GPU columns of costOverDays: NULL when a day of the bucket has none (GPUs not counted then). */
const GPU_TOTALS = `case when bool_and(gpu_hours is not null) then trim_scale(sum(gpu_hours))::text end as gpu_hours,
      case when bool_and(gpu_hours is not null) then trim_scale(sum(gpu_cost))::text end as gpu_cost,
      case when bool_and(gpu_hours is not null) then trim_scale(sum(gpu_unknown_resource_hours))::text end as gpu_unknown_resource_hours`;

function costOverDaysSql(bucket: CostBucket): string {
  const filter = (t: string) =>
    `($9::text is null or ${t}.kind = $9) and ($10::int is null or ${t}.project_id = $10) and ($11::int is null or ${t}.region_id = $11)`;
  // Days read from cost_daily: sealed ones, and those closed under the same gap caps ($12); of
  // these, the summed ones are read from cost_daily_totals (one row per group, not per scope)
  // when no project or region filter asks for the scopes, and while their totals' stamp still
  // matches the sealing or closing that wrote the day's cost_daily rows.
  return `with stored_days as (
      select day from cost_daily_sealed_days
      union select day from cost_daily_closed_days where caps = $12
    ),
    summed_days as (
      select t.day from cost_daily_totals_days t
      where $10::int is null and $11::int is null and t.day between $1::date and $2::date
        and t.source_at = coalesce(
          (select s.sealed_at from cost_daily_sealed_days s where s.day = t.day),
          (select c.closed_at from cost_daily_closed_days c where c.day = t.day and c.caps = $12))
    ),
    unsummed_days as (
      select day from stored_days where day between $1::date and $2::date
      except select day from summed_days
    ),
    ${piecesCte('stored_days')},
    -- Each piece joined to its snapshot's rollup rows in one go (an index lookup per piece): joining
    -- pieces to the rollups of their snapshots afterwards made the planner compare every pair.
    effective as (${effectiveRollupsSql('pieces', '$7', '$8', ['day', 'secs'], WINDOW_TIME_RANGE)}),
    live as (
      select e.day, e.group_value, e.currency, sum(e.price_per_hour * e.secs) / 3600 as cost,
        sum(e.resource_count * e.secs) / 3600 as resource_hours, sum(e.unpriced_count * e.secs) / 3600 as unpriced_resource_hours,
        ${gpuSums('e')}
      from effective e
      where ${filter('e')}
      group by e.day, e.group_value, e.currency
    ),
    -- Stored days without usable totals: read day by day (lateral, an index probe per day), as
    -- they are usually none or a few (all of them under a project or region filter).
    stored as (
      select d.* from unsummed_days u cross join lateral (
        select d.day, d.group_value, d.currency, case when d.currency is not null then d.cost end as cost, d.resource_hours, d.unpriced_resource_hours,
          d.gpu_hours, case when d.currency is not null then d.gpu_cost end as gpu_cost, d.gpu_unknown_resource_hours
        from cost_daily d
        where d.dimension = $7 and d.day = u.day and ${filter('d')}
        union all
        select d.day, $8::text, d.currency, case when d.currency is not null then d.cost end, d.resource_hours, d.unpriced_resource_hours,
          d.gpu_hours, case when d.currency is not null then d.gpu_cost end, d.gpu_unknown_resource_hours
        from cost_daily d
        where d.dimension = 'kind' and left($7, 4) = 'tag:' and d.day = u.day and ${filter('d')}
          and not exists (select 1 from cost_daily x where x.day = d.day and x.dimension = $7 and x.kind = d.kind and x.scope_key = d.scope_key)
      ) d
    ),
    -- The days of the range whose totals are not read. NOT IN keeps it a hashed filter on one
    -- range scan of the totals, whatever the planner guesses about how many days match (a join
    -- to the summed days, guessed at one row, made it rescan them for every row).
    not_summed as (
      select d::date as day from generate_series($1::date, $2::date, interval '1 day') d
      except select day from summed_days
    ),
    -- The same rows summed over scopes (the (untagged) rule applied when they were written for
    -- every tag dimension present on the day; a dimension absent that day is all (untagged)).
    summed as (
      select t.day, t.group_value, t.currency, case when t.currency is not null then t.cost end as cost, t.resource_hours, t.unpriced_resource_hours,
        t.gpu_hours, case when t.currency is not null then t.gpu_cost end as gpu_cost, t.gpu_unknown_resource_hours
      from cost_daily_totals t
      where t.dimension = $7 and t.day between $1::date and $2::date and t.day not in (select day from not_summed)
        and $10::int is null and $11::int is null and ($9::text is null or t.kind = $9)
      union all
      select t.day, $8::text, t.currency, case when t.currency is not null then t.cost end, t.resource_hours, t.unpriced_resource_hours,
        t.gpu_hours, case when t.currency is not null then t.gpu_cost end, t.gpu_unknown_resource_hours
      from cost_daily_totals t
      where t.dimension = 'kind' and left($7, 4) = 'tag:' and t.day between $1::date and $2::date and t.day not in (select day from not_summed)
        and $10::int is null and $11::int is null and ($9::text is null or t.kind = $9)
        and not exists (select 1 from cost_daily_totals x where x.dimension = $7 and x.day = t.day)
    )
    select ${BUCKET_SQL[bucket]} as bucket, group_value, currency,
      trim_scale(sum(cost))::text as cost, trim_scale(sum(resource_hours))::text as resource_hours,
      trim_scale(sum(unpriced_resource_hours))::text as unpriced_resource_hours,
      ${GPU_TOTALS}
    from (
      select day, group_value, currency, cost, resource_hours, unpriced_resource_hours, gpu_hours, gpu_cost, gpu_unknown_resource_hours from live
      union all
      select day, group_value, currency, cost, resource_hours, unpriced_resource_hours, gpu_hours, gpu_cost, gpu_unknown_resource_hours from stored
      union all
      select day, group_value, currency, cost, resource_hours, unpriced_resource_hours, gpu_hours, gpu_cost, gpu_unknown_resource_hours from summed
    ) u
    group by 1, group_value, currency
    order by 1, group_value, currency nulls last`;
}

// ---------------------------------------------------------------------------------------------
// Per-snapshot pieces of time, for per-resource integration (the FOCUS export).

export interface PricePiece {
  /** The priced snapshot whose run-rates hold during the piece. */
  snapshot_id: number;
  kind: PricedKind;
  scope_key: string;
  project_id: number | null;
  region_id: number | null;
  taken_at: Date;
  day: string;
  /** Only resources priced in this currency (sealed days); NULL = every resource of the snapshot. */
  currency: string | null;
  /** Seconds the snapshot's rates hold on that day (exact decimal text). */
  secs: string;
  /** The snapshot's rows of its own kind (snapshots.row_count, written with its completion). */
  row_count: number;
}

/**
 * The time each complete priced snapshot's run-rates hold on each UTC day of [fromDay, toDay]:
 * the same pieces dailyCosts integrates, so a resource's cost = sum(price_per_hour x secs) / 3600.
 * Sealed days have lost their hourly detail: there the day's last kept snapshot stands for the
 * whole day, its hours scaled per currency so that the day's total equals the stored cost_daily.
 */
export async function pricePieces(q: Queryable, query: { fromDay: string; toDay: string } & CostOverTimeOptions): Promise<PricePiece[]> {
  checkDayRange('pricePieces', query.fromDay, query.toDay);
  const kinds = PRICED_KINDS.map(sqlText).join(', ');
  return q.query<PricePiece & Record<string, unknown>>(
    `with ${piecesCte('cost_daily_sealed_days')},
    sealed_snaps as (
      select distinct on (kind, scope_key, taken_at::date) id, kind, scope_key, project_id, region_id, taken_at, taken_at::date as day
      from snapshots
      where complete and kind in (${kinds}) and taken_at::date between $1::date and $2::date
        and taken_at::date in (select day from cost_daily_sealed_days)
      order by kind, scope_key, taken_at::date, taken_at desc, id desc
    ),
    sealed_pieces as (
      select s.id, s.kind, s.scope_key, s.project_id, s.region_id, s.taken_at, s.day, d.currency, d.cost * 3600 / r.price_per_hour as secs
      from sealed_snaps s
      join cost_daily d on d.day = s.day and d.kind = s.kind and d.scope_key = s.scope_key and d.dimension = 'kind' and d.currency is not null
      join cost_rollups r on r.snapshot_id = s.id and r.dimension = 'kind' and r.currency = d.currency
      where r.price_per_hour > 0
    )
    select u.*, s.row_count from (
      select id as snapshot_id, kind, scope_key, project_id, region_id, taken_at, to_char(day, 'YYYY-MM-DD') as day, null::text as currency, secs
      from pieces
      union all
      select id, kind, scope_key, project_id, region_id, taken_at, to_char(day, 'YYYY-MM-DD'), currency, secs from sealed_pieces
    ) u join snapshots s on s.id = u.snapshot_id
    order by u.day, u.kind, u.scope_key, u.snapshot_id`,
    pieceParams(query.fromDay, query.toDay, query),
  );
}
