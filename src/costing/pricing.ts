/**
 * Pricing rules: what a resource costs per hour, as SQL over one snapshot's rows.
 *
 * Rules (README "Cost model"):
 * - An instance's hourly price is the GPU flavor price of its scope, matched by flavor_name
 *   (fallback: flavor_id), from the latest complete flavor snapshot of the scope taken at or
 *   before the instance snapshot (failing that, the flavor snapshot of the same run).
 * - A bare metal cluster costs its flavor's price x the number of its servers that run. A cluster
 *   whose servers are not listed (legacy responses) has an unknown price.
 * - A Kubernetes cluster costs the `total_price` of the pricing endpoint; its tags are the
 *   configuration's (the API gives it none).
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
import { gpuCountSql } from '../db/gpu-count.js';
import { sqlLiteral as sqlText } from '../db/sql-literal.js';

/** Snapshot kinds that carry cost. */
export const PRICED_KINDS = ['instance', 'cluster', 'k8s_price'] as const;
export type PricedKind = (typeof PRICED_KINDS)[number];

/** Hours in the month used to turn an hourly price into a monthly one (the provider's own factor). */
export const HOURS_PER_MONTH = 730;

/** Dimensions written for every priced snapshot, besides `tag:<key>`. */
export const FIXED_DIMENSIONS = ['project', 'region', 'kind', 'flavor', 'state'] as const;
export type FixedDimension = (typeof FIXED_DIMENSIONS)[number];

export const TAG_DIMENSION_PREFIX = 'tag:';
/** The groupings of costs, as a person writes them (`tag:<key>` normalised later). */
export const GROUPING_HELP = `project, region, kind, flavor, state or tag:<key>`;

/** Whether `by` names a grouping of costs (before a tag key's normalisation). */
export function isGrouping(by: string): boolean {
  if ((FIXED_DIMENSIONS as readonly string[]).includes(by)) return true;
  return by.startsWith(TAG_DIMENSION_PREFIX) && by.slice(TAG_DIMENSION_PREFIX.length).trim() !== '' && by.length <= 259;
}
/** Group of the `state` dimension for resources that run (and cost) / that do not. */
export const STATE_RUNNING = 'running';
export const STATE_STOPPED = 'stopped';
/** Group of the flavor / project / region dimensions when the resource has none. */
export const NO_VALUE = '(none)';


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
  /** The tags as the API gave them (a list of key, value, read_only; `[]` where the API gives none). */
  'tags_original',
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
  opts: {
    /** Only the instances listed in this relation (scope_key, instance_id), each read by its key. */
    instanceIds?: string;
    /** `snaps` is one snapshot whose rows (and catalogue) are these relations instead of the views: see SnapshotSources. */
    sources?: SnapshotSources;
  } = {},
): string {
  const branches: string[] = [];
  if (kinds.includes('instance')) branches.push(instanceBranch(snaps, opts.instanceIds, opts.sources));
  if (kinds.includes('cluster')) branches.push(clusterBranch(snaps, opts.sources));
  if (kinds.includes('k8s_price')) branches.push(k8sBranch(snaps, opts.sources));
  if (branches.length === 0) throw new Error('pricedResourcesSql: no kinds');
  return branches.join('\nunion all\n');
}

/**
 * The rows of the snapshots as relations written by code (CTE names, see snapshot-sources.ts),
 * each with its snapshot_id and the columns of SOURCE_COLUMNS, and the flavor catalogues as a
 * relation of one row per pricing flavor snapshot (snapshot_id, flavors_by_name, flavors_by_id:
 * flavorCatalogueSelectSql), which `snaps` names in its column flavor_snapshot_id. With them
 * pricedResourcesSql joins no view and correlates nothing with a distributed table, which Citus
 * cannot plan (a view's lateral join across two colocation groups).
 */
export interface SnapshotSources {
  instances: string;
  gpu_clusters: string;
  gpu_cluster_servers: string;
  k8s_cluster_prices: string;
  catalogue: string;
  /**
   * `snaps` is one snapshot and these relations hold only its rows: they are joined to it on true,
   * not by snapshot id, so the planner keeps their own row estimate (by id it guessed 1/200 of
   * them match, and then probed every later join once per row).
   */
  oneSnapshot?: boolean;
}

/**
 * The join condition of rows `rows` to their snapshots `snaps`: by snapshot id, or on true when
 * `snaps` is one snapshot and the rows only its own (see SnapshotSources.oneSnapshot).
 */
export function onSnapshotSql(rows: string, snaps: string, oneSnapshot = false): string {
  return oneSnapshot ? 'true' : `${rows}.snapshot_id = ${snaps}.id`;
}

/** The columns pricedResourcesSql reads of each view's rows (besides snapshot_id), and of the flavors for the catalogue. */
export const SOURCE_COLUMNS = {
  instances: ['instance_id', 'name', 'project_id', 'region_id', 'region', 'status', 'vm_state', 'flavor_name', 'flavor_id', 'tags', 'tags_original', 'created_at', 'ssh_key_name'],
  gpu_clusters: ['cluster_id', 'cluster_name', 'project_id', 'region_id', 'region', 'cluster_status', 'flavor_name', 'tags', 'tags_original', 'created_at', 'ssh_key_name'],
  gpu_cluster_servers: ['cluster_id', 'status', 'vm_state'],
  k8s_cluster_prices: ['cluster_name', 'project_id', 'region_id', 'tags', 'tags_original', 'currency_code', 'price_per_hour', 'price_per_month'],
  gpu_flavors: ['flavor_id', 'flavor_name', 'currency_code', 'price_per_hour', 'price_per_month', 'hardware'],
} as const;

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
 * loop (seconds per join at 100,000 instances instead of milliseconds). Numbers keep their exact
 * numeric value through jsonb. OFFSET 0 computes all this once per snapshot, not per resource.
 */
function snapshotsWithFlavors(snaps: string, kind: PricedKind, sources?: SnapshotSources): string {
  if (sources) {
    return `(select s.*, fm.flavors_by_name, fm.flavors_by_id from ${snaps} s left join ${sources.catalogue} fm on fm.snapshot_id = s.flavor_snapshot_id where s.kind = '${kind}')`;
  }
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
  return `left join lateral (${flavorCatalogueSelectSql('gpu_flavors', `g.snapshot_id = ${snapshotExpr}`)}) ${alias} on true`;
}

/**
 * SQL (a SELECT of one row: flavors_by_name, flavors_by_id) of the catalogue of the flavor rows
 * `g` of relation `flavors` (where `where`, if given); with `groupBy` (a column of the rows), one
 * row per value of it, that column first.
 */
export function flavorCatalogueSelectSql(flavors: string, where?: string, groupBy?: string): string {
  const fields = normalisedFlavorFields('g');
  const entry = `jsonb_build_object(${Object.entries(fields)
    .map(([name, expr]) => `'${name}', ${expr}`)
    .join(', ')}, 'flavor_name', g.flavor_name)`;
  return `select ${groupBy ? `g.${groupBy}, ` : ''}jsonb_object_agg(g.flavor_name, e.entry order by g.flavor_id desc) filter (where g.flavor_name is not null) as flavors_by_name,
             jsonb_object_agg(g.flavor_id::text, e.entry) filter (where g.flavor_id is not null) as flavors_by_id
        from ${flavors} g cross join lateral (select ${entry} as entry) e${where ? `
       where ${where}` : ''}${groupBy ? `
       group by g.${groupBy}` : ''}`;
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

function instanceBranch(snaps: string, ids?: string, sources?: SnapshotSources): string {
  const running = runningSql('i.status', 'i.vm_state');
  return `select i.snapshot_id, s.taken_at, 'instance'::text as kind, s.scope_key, i.instance_id as resource_id, i.name,
    coalesce(i.project_id, s.project_id) as project_id, coalesce(i.region_id, s.region_id) as region_id, i.region as region_name,
    coalesce(nullif(trim(i.status), ''), i.vm_state) as status, ${running} as running,
    coalesce(i.flavor_name, fy.flavor_name, i.flavor_id, ${sqlText(NO_VALUE)}) as flavor, i.tags, i.tags_original, i.created_at,
    i.ssh_key_name, null::int as servers_total,
    ${flavorPrices(`case when ${running} then 1 else 0 end`)}
  from ${snapshotsWithFlavors(snaps, 'instance', sources)} s
  ${ids ? listedInstancesSql(ids) : `join ${sources?.instances ?? 'instances'} i on ${onSnapshotSql('i', 's', sources?.oneSnapshot)}`}
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

function clusterBranch(snaps: string, sources?: SnapshotSources): string {
  // A cluster whose servers were not listed runs when its cluster_status is ACTIVE; its price is
  // unknown (how many servers run is unknown), so `known` also requires listed servers.
  const running = `(coalesce(sv.active, 0) > 0 or (coalesce(sv.total, 0) = 0 and upper(trim(coalesce(c.cluster_status, ''))) = 'ACTIVE'))`;
  return `select c.snapshot_id, s.taken_at, 'cluster'::text as kind, s.scope_key, c.cluster_id as resource_id, c.cluster_name as name,
    coalesce(c.project_id, s.project_id) as project_id, coalesce(c.region_id, s.region_id) as region_id, c.region as region_name,
    c.cluster_status as status, ${running} as running,
    coalesce(c.flavor_name, ${sqlText(NO_VALUE)}) as flavor, c.tags, c.tags_original, c.created_at,
    c.ssh_key_name, coalesce(sv.total, 0) as servers_total,
    ${flavorPrices('coalesce(sv.active, 0)', 'coalesce(sv.total, 0) > 0')}
  from ${snapshotsWithFlavors(snaps, 'cluster', sources)} s
  join ${sources?.gpu_clusters ?? 'gpu_clusters'} c on ${onSnapshotSql('c', 's', sources?.oneSnapshot)}
  ${sources ? serverCountsOfSources(sources.gpu_cluster_servers) : `left join lateral (
    select ${SERVER_COUNTS} from gpu_cluster_servers v where v.snapshot_id = c.snapshot_id and v.cluster_id = c.cluster_id) sv on true`}
  ${flavorLookupSql('s', 'c.flavor_name', 'c.flavor_name')}`;
}

/** Servers listed and running per cluster (`v`: the servers). */
const SERVER_COUNTS = `count(*)::int as total, (count(*) filter (where ${runningSql('v.status', 'v.vm_state')}))::int as active`;

/** The server counts of each cluster `c` from the servers of the snapshots (SnapshotSources): grouped once, joined by snapshot and cluster. */
function serverCountsOfSources(servers: string): string {
  return `left join (select v.snapshot_id, v.cluster_id, ${SERVER_COUNTS} from ${servers} v group by v.snapshot_id, v.cluster_id) sv
    on sv.snapshot_id = c.snapshot_id and sv.cluster_id = c.cluster_id`;
}

function k8sBranch(snaps: string, sources?: SnapshotSources): string {
  return `select k.snapshot_id, s.taken_at, 'k8s_price'::text as kind, s.scope_key, k.cluster_name as resource_id, k.cluster_name as name,
    coalesce(k.project_id, s.project_id) as project_id, coalesce(k.region_id, s.region_id) as region_id, null::text as region_name,
    -- price_status (show / hide) says whether the price is visible, not how the cluster runs.
    null::text as status, true as running,
    ${sqlText(NO_VALUE)}::text as flavor, k.tags, k.tags_original, null::timestamptz as created_at,
    null::text as ssh_key_name, null::int as servers_total,
    ${priceColumns({ currency: 'k.currency_code', hour: 'k.price_per_hour', month: 'k.price_per_month', quantity: '1' })}
  from ${snaps} s
  join ${sources?.k8s_cluster_prices ?? 'k8s_cluster_prices'} k on ${onSnapshotSql('k', 's', sources?.oneSnapshot)}
  where s.kind = 'k8s_price'`;
}

