/**
 * Why a group's spend changed on one day, from the snapshots: per (kind, scope), the resources of
 * the last complete snapshot before the day began ("before") against those of the last snapshot
 * whose run-rate holds on the day ("after"), each resource's cost in the group priced by the cost
 * model (pricedResourcesSql). A line's cost impact is its actual cost in the group over the day
 * (run-rate x the hours each snapshot's rate holds, the same pieces as the daily figures) minus
 * what it would have cost had it stayed as it was at the day's start: so started, stopped,
 * appeared, disappeared, re-flavored, re-priced and re-tagged (moved between groups) resources
 * all show with their own amount, and the lines add up to the day's spend minus the spend at the
 * day's start state. What changed in each resource is told by the changes report's diff.
 */
import { createHash } from 'node:crypto';
import { gapCapsFor } from '../../costing/gap-caps.js';
import { pricePieces, type PricePiece } from '../../costing/price-pieces.js';
import { flavorSnapshotSql, NO_VALUE, PRICED_KINDS, pricedResourcesSql, type PricedKind } from '../../costing/pricing.js';
import type { Queryable } from '../../db/connection.js';
import { arrayParam, queryRows, sql, type SQL } from '../../db/statement.js';
import { UNTAGGED } from '../../db/schema.js';
import { versionedTable, versionEndedIn, versionStartedIn } from '../../db/versions.js';
import type { Config } from '../../config/index.js';
import { absDecimal, addDecimal, compareDecimal, divideDecimal, subtractDecimal } from '../../read-models/decimal.js';
import { diffSnapshotPairs, type ChangeKind, type ResourceChange } from '../changes.js';
import { formatInstant, kindLabel } from './format.js';
import { readStoredExplanation, type Explanation, type ExplanationKey, type ExplanationLine, type LineChange } from '../../costing/derive/anomaly-explanations.js';

export type { Explanation, ExplanationLine, LineChange };

interface LineRow {
  kind: PricedKind;
  scope_key: string;
  resource_id: string;
  name: string | null;
  before_id: number | null;
  after_id: number;
  present_before: boolean;
  present_after: boolean;
  in_before: boolean;
  in_after: boolean;
  running_before: boolean | null;
  running_after: boolean | null;
  quantity_before: number | null;
  quantity_after: number | null;
  flavor_before: string | null;
  flavor_after: string | null;
  unit_before: string | null;
  unit_after: string | null;
  p_before: string;
  p_after: string;
  impact: string;
  hours: string | null;
  total_lines: number;
  explained: string;
}

/** A resource's group in `dimension` (`project`, ..., `tag:<key>`), on priced resource rows `r`. */
function groupSql(dimension: string): SQL {
  return sql`case ${dimension}::text
    when 'project' then coalesce(r.project_id::text, ${NO_VALUE}::text)
    when 'region' then coalesce(r.region_id::text, ${NO_VALUE}::text)
    when 'kind' then r.kind
    when 'flavor' then r.flavor
    when 'state' then case when r.running then 'running' else 'stopped' end
    else coalesce(r.tags ->> substr(${dimension}::text, 5), ${UNTAGGED}::text) end`;
}


const INSTANCE_VERSIONS = versionedTable('instances').versions;

function linesSql(query: ExplainQuery, pieces: readonly PricePiece[], maxLines: number): SQL {
  const dayStart = `${query.day}T00:00:00Z`;
  return sql`with pcs as (
    select snapshot_id, sum(secs) as secs from unnest(${arrayParam(pieces.map((p) => p.snapshot_id))}::int[], ${arrayParam(pieces.map((p) => p.secs))}::numeric[]) as p(snapshot_id, secs) group by snapshot_id
  ),
  day_snaps as (
    select s.id, s.kind, s.scope_key, s.project_id, s.region_id, s.taken_at, s.run_id, p.secs
    from snapshots s join pcs p on p.snapshot_id = s.id
  ),
  scopes as (
    select kind, scope_key, sum(secs) as secs, (array_agg(id order by taken_at desc, id desc))[1] as after_id
    from day_snaps group by kind, scope_key
  ),
  pairs as (
    select c.*, (select b.id from snapshots b
        where b.complete and b.kind = c.kind and b.scope_key = c.scope_key and b.taken_at < ${dayStart}::timestamptz
        order by b.taken_at desc, b.id desc limit 1) as before_id
    from scopes c
  ),
  all_snaps as (
    select id, kind, scope_key, project_id, region_id, taken_at, run_id from day_snaps
    union
    select s.id, s.kind, s.scope_key, s.project_id, s.region_id, s.taken_at, s.run_id from snapshots s where s.id in (select before_id from pairs)
  ),
  -- Instances in the same state in every snapshot compared (before and all of the day's) and
  -- whose flavor's price did not change cost the same all day and in the same group: their impact
  -- is 0, so they are not priced at all (pricing every instance of each hourly snapshot is most of
  -- the work).
  snap_counts as (select scope_key, count(*) as n from all_snaps where kind = 'instance' group by scope_key),
  inst_spans as (
    select a.scope_key, min(a.taken_at) as t0, max(a.taken_at) as t1, bool_and(s.versioned) as versioned
    from all_snaps a join snapshots s on s.id = a.id where a.kind = 'instance' group by a.scope_key
  ),
  changing as (
    -- Scopes whose compared snapshots are all folded into versions: an instance differs between
    -- two of them (or is missing from one) only if a version of it began or ended between the
    -- first and the last. A superset of the comparison below (any column counts), which prices a
    -- few unchanged instances more, at their exact (zero) impact, instead of comparing every row.
    -- (The ends and the starts as two index ranges: as one OR over a span from a CTE, the planner
    -- walked every version of the scope.)
    select v.scope_key, v.instance_id
    from inst_spans sp join ${sql.raw(INSTANCE_VERSIONS)} v on v.scope_key = sp.scope_key and ${sql.raw(versionEndedIn('v', 'sp.t0', 'sp.t1'))}
    where sp.versioned
    union
    select v.scope_key, v.instance_id
    from inst_spans sp join ${sql.raw(INSTANCE_VERSIONS)} v on v.scope_key = sp.scope_key and ${sql.raw(versionStartedIn('v', 'sp.t0', 'sp.t1'))}
    where sp.versioned
    union
    -- Other scopes (rows still staged): in some snapshot, not as in the last one (by the primary
    -- key; columns compared as values)
    select a.scope_key, i.instance_id
    from all_snaps a
    join pairs p on p.kind = a.kind and p.scope_key = a.scope_key and p.after_id <> a.id
    join instances i on i.snapshot_id = a.id
    left join instances y on y.snapshot_id = p.after_id and y.instance_id = i.instance_id
    where a.kind = 'instance' and a.scope_key in (select scope_key from inst_spans where not versioned)
      and (y.instance_id is null
        or (i.status, i.vm_state, i.flavor_name, i.flavor_id, i.project_id, i.region_id, i.tags)
          is distinct from (y.status, y.vm_state, y.flavor_name, y.flavor_id, y.project_id, y.region_id, y.tags))
    union
    -- in the last one, missing from some other
    select a.scope_key, i.instance_id
    from all_snaps a join instances i on i.snapshot_id = a.id
    where a.kind = 'instance' and a.scope_key in (select scope_key from inst_spans where not versioned)
    group by a.scope_key, i.instance_id
    having count(*) < (select n from snap_counts c where c.scope_key = a.scope_key)
  ),
  flavor_snaps as (select distinct a.scope_key, ${sql.raw(flavorSnapshotSql('a'))} as fid from all_snaps a where a.kind = 'instance'),
  repriced as (
    select f.scope_key, g.flavor_name, g.flavor_id
    from flavor_snaps f join gpu_flavors g on g.snapshot_id = f.fid
    group by f.scope_key, g.flavor_name, g.flavor_id
    having count(distinct (g.currency_code, g.price_per_hour, g.price_per_month)) > 1
      or count(*) < (select count(*) from flavor_snaps f2 where f2.scope_key = f.scope_key)
  ),
  -- The instances to price: those that changed, and those whose flavor's price changed in the
  -- day (looked for only in scopes where one did). Each is then read by its key: a condition on
  -- the rows instead read every instance of every compared snapshot and kept the few that changed.
  targets as materialized (
    select scope_key, instance_id from changing
    union
    select a.scope_key, i.instance_id
    from all_snaps a join instances i on i.snapshot_id = a.id
    where a.kind = 'instance' and a.scope_key in (select scope_key from repriced)
      and ((a.scope_key, i.flavor_name) in (select scope_key, flavor_name from repriced)
        or (a.scope_key, i.flavor_id) in (select scope_key, flavor_id from repriced))
  ),
  member as (
    select r.snapshot_id, r.kind, r.scope_key, r.resource_id, r.name, r.running, r.quantity, r.flavor, r.unit_price_per_hour,
      (${groupSql(query.dimension)}) = ${query.group}::text and r.currency is not distinct from ${query.currency}::text as in_group,
      case when (${groupSql(query.dimension)}) = ${query.group}::text and r.currency is not distinct from ${query.currency}::text then r.price_per_hour else 0 end as p
    from (${sql.raw(pricedResourcesSql('all_snaps', PRICED_KINDS, { instanceIds: 'targets' }))}) r
  ),
  day_cost as (
    select m.kind, m.scope_key, m.resource_id, sum(m.p * pc.secs) / 3600 as cost
    from member m join pcs pc on pc.snapshot_id = m.snapshot_id
    group by m.kind, m.scope_key, m.resource_id
  ),
  bef as (select m.* from member m join pairs p on p.before_id = m.snapshot_id),
  aft as (select m.* from member m join pairs p on p.after_id = m.snapshot_id),
  keys as (
    select kind, scope_key, resource_id from bef union select kind, scope_key, resource_id from aft
    union select kind, scope_key, resource_id from day_cost
  ),
  lines as (
    select k.kind, k.scope_key, k.resource_id, coalesce(a.name, b.name) as name, ps.before_id, ps.after_id,
      b.resource_id is not null as present_before, a.resource_id is not null as present_after,
      coalesce(b.in_group, false) as in_before, coalesce(a.in_group, false) as in_after,
      b.running as running_before, a.running as running_after, b.quantity as quantity_before, a.quantity as quantity_after,
      b.flavor as flavor_before, a.flavor as flavor_after, b.unit_price_per_hour as unit_before, a.unit_price_per_hour as unit_after,
      coalesce(b.p, 0) as p_before, coalesce(a.p, 0) as p_after,
      coalesce(dc.cost, 0) - coalesce(b.p, 0) * ps.secs / 3600 as impact
    from keys k
    join pairs ps on ps.kind = k.kind and ps.scope_key = k.scope_key
    left join bef b on b.kind = k.kind and b.scope_key = k.scope_key and b.resource_id = k.resource_id
    left join aft a on a.kind = k.kind and a.scope_key = k.scope_key and a.resource_id = k.resource_id
    left join day_cost dc on dc.kind = k.kind and dc.scope_key = k.scope_key and dc.resource_id = k.resource_id
  ),
  relevant as (
    select l.*, count(*) over ()::int as total_lines, sum(impact) over () as explained from lines l
    where (l.in_before or l.in_after or l.impact <> 0) and (l.impact <> 0 or l.p_before <> l.p_after or l.in_before <> l.in_after)
  )
  select kind, scope_key, resource_id, name, before_id, after_id, present_before, present_after, in_before, in_after,
    running_before, running_after, quantity_before, quantity_after, flavor_before, flavor_after,
    trim_scale(unit_before)::text as unit_before, trim_scale(unit_after)::text as unit_after,
    trim_scale(p_before)::text as p_before, trim_scale(p_after)::text as p_after, trim_scale(impact)::text as impact,
    case when p_after <> p_before then trim_scale(round(impact / (p_after - p_before), 2))::text end as hours,
    total_lines, trim_scale(explained)::text as explained
  from relevant
  order by abs(impact) desc, kind, scope_key, resource_id
  limit ${maxLines}`;
}

const CHANGE_KINDS: Record<PricedKind, ChangeKind> = { instance: 'instances', cluster: 'clusters', k8s_price: 'k8s-prices' };

export interface ExplainQuery {
  day: string;
  dimension: string;
  group: string;
  currency: string;
  /** Lines listed (largest impact first); default 20. */
  maxLines?: number;
}

const EMPTY: Explanation = { lines: [], more: 0, explained: '0', compared: [] };

/**
 * Bump when an Explanation's shape or wording changes: explanations stored in another format are
 * then explained again rather than shown.
 */
const EXPLANATION_FORMAT = 1;

/** What explaining a day reads: its price pieces, and a digest of everything that decides the explanation. */
interface ExplanationInputs {
  pieces: PricePiece[];
  maxLines: number;
  digest: string;
}

/**
 * SQL ($1 the pieces' snapshot ids, $2 the day's start): the other snapshots an explanation reads,
 * as id arrays: the last complete one before the day in each (kind, scope) of the pieces, and the
 * flavor snapshots pricing those and the pieces' (linesSql's pairs and flavor_snaps).
 */
const READ_BESIDES_SQL = `with day_snaps as (select id, kind, scope_key, taken_at, run_id from snapshots where id = any($1::int[])),
  befores as (
    select b.id, b.kind, b.scope_key, b.taken_at, b.run_id
    from (select distinct kind, scope_key from day_snaps) p
    cross join lateral (
      select b.id, b.kind, b.scope_key, b.taken_at, b.run_id from snapshots b
      where b.complete and b.kind = p.kind and b.scope_key = p.scope_key and b.taken_at < $2::timestamptz
      order by b.taken_at desc, b.id desc limit 1) b
  ),
  compared as (select * from day_snaps union select * from befores)
  select array(select id from befores order by id) as before_ids,
    array(select distinct ${flavorSnapshotSql('c')} as fid from compared c order by fid) as flavor_ids`;

/**
 * The inputs of a day's explanation. Complete snapshots never change, so the explanation is
 * decided by which snapshots price the day and for how long (the pieces: a late snapshot, other
 * gap caps or thinned history give other pieces), the snapshots it reads besides them (the one
 * before the day in each scope, the flavor snapshots that price them all), the lines wanted and
 * the format: their digest says whether a stored explanation still holds.
 */
async function explanationInputs(q: Queryable, config: Config, now: Date, query: ExplainQuery): Promise<ExplanationInputs> {
  const maxLines = query.maxLines ?? 20;
  const pieces = (await pricePieces(q, { fromDay: query.day, toDay: query.day, now, maxGapHours: gapCapsFor(config) })).filter(
    (p) => p.currency === null || p.currency === query.currency,
  );
  if (pieces.length === 0) return { pieces, maxLines, digest: '' };
  const [besides] = await q.query<{ before_ids: number[]; flavor_ids: Array<number | null> }>(READ_BESIDES_SQL, [
    [...new Set(pieces.map((p) => p.snapshot_id))],
    `${query.day}T00:00:00Z`,
  ]);
  const pieceKeys = pieces.map((p) => `${p.snapshot_id}:${p.secs}:${p.currency ?? ''}`).sort();
  const digest = createHash('sha256')
    .update(JSON.stringify([EXPLANATION_FORMAT, maxLines, pieceKeys, besides!.before_ids, besides!.flavor_ids]))
    .digest('hex');
  return { pieces, maxLines, digest };
}

/**
 * Why `query.group` spent what it did on `query.day`: the explanation stored after the last
 * collection run when it was computed from the same inputs, else explained now.
 */
export async function explainDay(q: Queryable, config: Config, now: Date, query: ExplainQuery): Promise<Explanation> {
  const inputs = await explanationInputs(q, config, now, query);
  if (inputs.pieces.length === 0) return EMPTY;
  return (await readStoredExplanation(q, keyOf(query), inputs.digest)) ?? explainPieces(q, query, inputs);
}

/**
 * The digest of what decides `query`'s explanation and how to compute it (for storing it after a
 * run: costing/derive/anomaly-explanations.ts); null when no snapshot prices the day.
 */
export async function prepareExplanation(q: Queryable, config: Config, now: Date, query: ExplainQuery): Promise<{ digest: string; explain(): Promise<Explanation> } | null> {
  const inputs = await explanationInputs(q, config, now, query);
  if (inputs.pieces.length === 0) return null;
  return { digest: inputs.digest, explain: () => explainPieces(q, query, inputs) };
}

const keyOf = (query: ExplainQuery): ExplanationKey => ({ dimension: query.dimension, group: query.group, currency: query.currency, day: query.day });

async function explainPieces(q: Queryable, query: ExplainQuery, { pieces, maxLines }: ExplanationInputs): Promise<Explanation> {
  const rows = await queryRows<LineRow & Record<string, unknown>>(q, linesSql(query, pieces, maxLines));
  const compared = await comparedSnapshots(q, rows);
  const diffs = await resourceDiffs(q, rows);
  const lines = rows.map((r) => lineOf(r, diffs.get(`${r.kind}|${r.scope_key}|${r.resource_id}`) ?? null, query.currency));
  const total = rows[0]?.total_lines ?? 0;
  return { lines, more: Math.max(0, total - lines.length), explained: rows[0]?.explained ?? '0', compared };
}

async function comparedSnapshots(q: Queryable, rows: readonly LineRow[]): Promise<Explanation['compared']> {
  const ids = [...new Set(rows.flatMap((r) => (r.before_id === null ? [r.after_id] : [r.before_id, r.after_id])))];
  if (ids.length === 0) return [];
  const at = new Map(
    (await q.query<{ id: number; taken_at: Date }>('select id, taken_at from snapshots where id = any($1::int[])', [ids])).map((s) => [s.id, new Date(s.taken_at)]),
  );
  const seen = new Map<string, Explanation['compared'][number]>();
  for (const r of rows) {
    const key = `${r.kind}|${r.scope_key}`;
    if (!seen.has(key)) seen.set(key, { kind: r.kind, scope: r.scope_key, before_at: r.before_id === null ? null : at.get(r.before_id)!, after_at: at.get(r.after_id)! });
  }
  return [...seen.values()];
}

/** The changes report's diff of each compared pair, by kind|scope|resource. */
async function resourceDiffs(q: Queryable, rows: readonly LineRow[]): Promise<Map<string, ResourceChange>> {
  const out = new Map<string, ResourceChange>();
  for (const kind of PRICED_KINDS) {
    const pairs = new Map<string, { scope_key: string; from_id: number; to_id: number }>();
    for (const r of rows) {
      if (r.kind === kind && r.before_id !== null && r.before_id !== r.after_id) pairs.set(r.scope_key, { scope_key: r.scope_key, from_id: r.before_id, to_id: r.after_id });
    }
    const wanted = new Set(rows.filter((r) => r.kind === kind).map((r) => `${r.scope_key}|${r.resource_id}`));
    for (const change of await diffSnapshotPairs(q, CHANGE_KINDS[kind], [...pairs.values()])) {
      if (wanted.has(`${change.scope_key}|${change.resource_id}`)) out.set(`${kind}|${change.scope_key}|${change.resource_id}`, change);
    }
  }
  return out;
}

function changeOf(r: LineRow): LineChange {
  if (!r.present_before && r.present_after) return 'appeared';
  if (r.present_before && !r.present_after) return 'disappeared';
  if (!r.present_before && !r.present_after) return 'ran part of the day';
  if (!r.in_before && r.in_after) return 'moved in';
  if (r.in_before && !r.in_after) return 'moved out';
  if (r.quantity_before !== r.quantity_after) return (r.quantity_after ?? 0) > (r.quantity_before ?? 0) ? 'started' : 'stopped';
  if (r.flavor_before !== r.flavor_after) return 'flavor changed';
  if (r.unit_before !== r.unit_after) return 'price changed';
  return 'ran part of the day';
}

/** `status: SHUTOFF -> ACTIVE; team: "web" -> "ml"` from the diff (fields, then tags). */
function detailsOf(diff: ResourceChange | null, r: LineRow): string {
  const parts: string[] = [];
  if (diff) {
    for (const [field, [before, after]] of Object.entries(diff.fields)) parts.push(`${field}: ${String(before ?? '(none)')} -> ${String(after ?? '(none)')}`);
    if (diff.tag_changes) parts.push(diff.tag_changes);
  }
  if (r.unit_before !== null && r.unit_after !== null && r.unit_before !== r.unit_after) parts.push(`price per hour: ${r.unit_before} -> ${r.unit_after}`);
  return parts.join('; ');
}

const money = (v: string) => divideDecimal(v, '1', 2);
const signed = (v: string) => (compareDecimal(v, '0') >= 0 ? `+${money(v)}` : money(v));

function lineOf(r: LineRow, diff: ResourceChange | null, currency: string): ExplanationLine {
  const change = changeOf(r);
  const details = detailsOf(diff, r);
  const what = `${kindLabel(r.kind).replace(/s$/, '').toLowerCase()} ${r.name ?? r.resource_id}${r.name && r.name !== r.resource_id ? ` (${r.resource_id})` : ''}`;
  const flavor = r.flavor_after ?? r.flavor_before;
  const rate = `${r.p_before} -> ${r.p_after} ${currency}/h`;
  const arithmetic = r.hours !== null ? `${signed(subtractDecimal(r.p_after, r.p_before))}/h x ${r.hours} h` : rate;
  const text = `${what} in ${r.scope_key}${flavor && flavor !== NO_VALUE ? `, ${flavor}` : ''}: ${change}${details ? ` (${details})` : ''}; ${arithmetic} = ${signed(r.impact)} ${currency}`;
  return {
    kind: r.kind,
    scope: r.scope_key,
    resource_id: r.resource_id,
    name: r.name,
    change,
    details,
    price_per_hour_before: r.p_before,
    price_per_hour_after: r.p_after,
    hours: r.hours,
    impact: r.impact,
    text,
  };
}

/** One sentence of an explanation: the changes by kind with their impact, largest first. */
export function summarise(e: Explanation, currency: string): string {
  if (e.lines.length === 0) return 'No resource of the group changed between the snapshots before and during the day.';
  const byChange = new Map<string, { count: number; impact: string }>();
  for (const l of e.lines) {
    const key = `${l.change} (${kindLabel(l.kind).toLowerCase()})`;
    const agg = byChange.get(key) ?? { count: 0, impact: '0' };
    agg.count++;
    agg.impact = addDecimal(agg.impact, l.impact);
    byChange.set(key, agg);
  }
  const parts = [...byChange.entries()]
    .sort(([, a], [, b]) => compareDecimal(absDecimal(b.impact), absDecimal(a.impact)))
    .map(([key, a]) => `${a.count} ${key} ${signed(a.impact)} ${currency}`);
  return `${parts.join('; ')}${e.more > 0 ? `; and ${e.more} more` : ''}.`;
}

export function comparedNote(e: Explanation): string[] {
  return e.compared.map((c) => `${kindLabel(c.kind)} in ${c.scope}: ${c.before_at ? formatInstant(c.before_at) : 'no snapshot before the day'} -> ${formatInstant(c.after_at)}`);
}
