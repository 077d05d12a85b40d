/**
 * Kubernetes cluster prices (latest complete pricing snapshot per scope) with the breakdown into
 * instances, public IPs and volumes as the pricing endpoint gives it.
 */
import { z } from 'zod';
import type { Column, Row } from './report.js';
import { listRows } from './shared/batches.js';
import { footRows } from '../present/footing.js';
import { chartNumber } from './shared/format.js';
import { dirParam, idParam, sortParam } from './shared/params.js';
import { latestSnapshotIds, latestSnapshots, snapshotsByIdSql } from '../db/latest-snapshots.js';
import { viewRowsSql } from '../db/versions.js';
import { freshnessNotes } from './shared/snapshots.js';
import { defineReport } from './shared/define.js';
import type { Report, ReportCtx } from './shared/types.js';
import { scopeOf } from './shared/access-scope.js';
import { tagsInScopeSql, type TagScope } from '../db/access-scope-sql.js';
import { latestTotals } from '../costing/current-costs.js';
import { runRateItems } from './shared/summary.js';
import { totalRow } from './shared/totals.js';

const SORTS = ['cluster_name', 'scope', 'price_per_hour', 'price_per_month'] as const;

export const k8sPricesParams = z.strictObject({
  project: idParam('project'),
  region: idParam('region'),
  sort: sortParam(SORTS),
  dir: dirParam,
});
export type K8sPricesParams = z.infer<typeof k8sPricesParams>;

const PARTS = ['instances', 'publicips', 'volumes'] as const;
/** The parts as people name them (chart legends). */
const PART_LABELS: Record<(typeof PARTS)[number], string> = { instances: 'Instances', publicips: 'Public IPs', volumes: 'Volumes' };

/**
 * Sum of a breakdown list's hourly prices in the total's currency; items in another currency
 * are counted apart (never added).
 */
function partSql(part: (typeof PARTS)[number]): string {
  const items = `jsonb_array_elements(case when jsonb_typeof(k.breakdown -> '${part}') = 'array' then k.breakdown -> '${part}' else '[]'::jsonb end)`;
  const hour = `case when (it ->> 'price_per_hour') ~ '^-?[0-9]+(\\.[0-9]+)?$' then (it ->> 'price_per_hour')::numeric end`;
  return `(select sum(${hour}) from ${items} it where upper(it ->> 'currency_code') = upper(k.currency_code)) as ${part}_per_hour,
    (select count(*)::int from ${items} it) as ${part}_items,
    (select count(*)::int from ${items} it where upper(coalesce(it ->> 'currency_code', '')) <> upper(coalesce(k.currency_code, ''))) as ${part}_other_currency`;
}

const ORDER: Record<(typeof SORTS)[number], string> = {
  cluster_name: 'cluster_name',
  scope: 'scope_key',
  price_per_hour: 'coalesce(price_per_hour, -1)',
  price_per_month: 'coalesce(price_per_month, -1)',
};

/** The clusters of the pricing snapshots `latestIds` (read once per request) matching the filters, as CTEs `latest` and `rows`. */
function rowsCte(latestIds: number[], p: K8sPricesParams, scope: TagScope | null): { sql: string; values: unknown[] } {
  return {
    sql: `latest as (${snapshotsByIdSql('$1')}),
      rows as (
        select l.scope_key, coalesce(k.project_id, l.project_id) as project_id, coalesce(k.region_id, l.region_id) as region_id,
          k.cluster_name, upper(k.currency_code) as currency, k.price_per_hour, k.price_per_month, k.price_without_discount_per_month,
          k.discount_percent, k.tax_percent, k.price_status, ${PARTS.map(partSql).join(', ')}
        from latest l join ${viewRowsSql('k8s_cluster_prices', snapshotsByIdSql('$1'))} k on k.snapshot_id = l.id
        where ($2::int is null or coalesce(k.project_id, l.project_id) = $2) and ($3::int is null or coalesce(k.region_id, l.region_id) = $3)
          -- A scoped user's clusters: those whose configured tags (k8s_clusters) are in the scope.
          and ($4::text is null or ${tagsInScopeSql('k.tags', '$4::text', '$5::text[]')})
      )`,
    values: [latestIds, p.project ?? null, p.region ?? null, scope?.key ?? null, scope ? [...scope.values] : null],
  };
}

async function fetchRows(ctx: ReportCtx, p: K8sPricesParams, latestIds: number[], limit: number, offset: number): Promise<{ rows: Row[]; total: number }> {
  const dir = p.dir ?? (p.sort === 'price_per_hour' || p.sort === 'price_per_month' ? 'desc' : 'asc');
  const order = p.sort ? `${ORDER[p.sort]} ${dir}, scope_key, cluster_name` : 'scope_key, cluster_name';
  const cte = rowsCte(latestIds, p, scopeOf(ctx));
  const found = await ctx.db.query<Record<string, unknown>>(
    `with ${cte.sql}
      select *, count(*) over ()::int as total_rows from rows order by ${order} limit $6 offset $7`,
    [...cte.values, limit, offset],
  );
  return {
    rows: found.map((r) => {
      const row: Row = {};
      for (const c of COLUMNS) row[c.key] = r[c.key === 'scope' ? 'scope_key' : c.key] ?? null;
      return row;
    }),
    total: Number(found[0]?.total_rows ?? 0),
  };
}

/** Money columns and item counts summed per currency over every matching cluster (not the page). */
const SUMMED = ['price_per_hour', 'price_per_month', 'price_without_discount_per_month', ...PARTS.flatMap((part) => [`${part}_per_hour`, `${part}_items`])];

async function totals(ctx: ReportCtx, p: K8sPricesParams, latestIds: number[]): Promise<Row[]> {
  const cte = rowsCte(latestIds, p, scopeOf(ctx));
  const found = await ctx.db.query<Record<string, unknown>>(
    `with ${cte.sql}
      select currency, ${SUMMED.map((k) => (k.endsWith('_items') ? `sum(${k})::int as ${k}` : `sum(${k}) as ${k}`)).join(', ')}
      from rows where currency is not null group by currency order by currency`,
    cte.values,
  );
  return found.map((r) => totalRow(COLUMNS, Object.fromEntries([['currency', r.currency], ...SUMMED.map((k) => [k, r[k] ?? null])])));
}

/**
 * Every cluster with its rounded amounts footed to the totals (present/footing.ts): the footing
 * needs every row of a currency, so a page is cut from all of them (clusters are few).
 */
async function footedRows(ctx: ReportCtx, p: K8sPricesParams, latestIds: number[], sums: Promise<Row[]>): Promise<{ rows: Row[]; total: number }> {
  const [{ rows, total }, totalRows] = await Promise.all([fetchRows(ctx, p, latestIds, Number.MAX_SAFE_INTEGER, 0), sums]);
  return { rows: footRows(rows, COLUMNS, totalRows), total };
}

const COLUMNS: Column[] = [
  { key: 'cluster_name', label: 'Cluster', kind: 'text', sortable: true },
  { key: 'scope', label: 'Scope', kind: 'text', sortable: true, secondary: true },
  { key: 'project_id', label: 'Project', kind: 'int' },
  { key: 'region_id', label: 'Region', kind: 'int' },
  { key: 'price_per_hour', hourly: true, label: 'Total per hour', kind: 'money', currencyKey: 'currency', sortable: true },
  { key: 'price_per_month', label: 'Total per month', kind: 'money', currencyKey: 'currency', sortable: true },
  { key: 'price_without_discount_per_month', label: 'Per month before discount', kind: 'money', currencyKey: 'currency', secondary: true },
  { key: 'discount_percent', label: 'Discount %', kind: 'decimal' },
  { key: 'tax_percent', label: 'Tax %', kind: 'decimal', secondary: true },
  { key: 'currency', label: 'Currency', kind: 'text', secondary: true },
  { key: 'instances_per_hour', hourly: true, label: 'Instances per hour', kind: 'money', currencyKey: 'currency' },
  { key: 'instances_items', label: 'Instance items', kind: 'int', secondary: true },
  { key: 'publicips_per_hour', hourly: true, label: 'Public IPs per hour', kind: 'money', currencyKey: 'currency', secondary: true },
  { key: 'publicips_items', label: 'Public IP items', kind: 'int', secondary: true },
  { key: 'volumes_per_hour', hourly: true, label: 'Volumes per hour', kind: 'money', currencyKey: 'currency', secondary: true },
  { key: 'volumes_items', label: 'Volume items', kind: 'int', secondary: true },
  { key: 'price_status', label: 'Price status', kind: 'text' },
];

export const k8sPricesReport: Report<K8sPricesParams> = defineReport({
  name: 'k8s-prices',
  title: 'Kubernetes prices',
  description: 'Managed Kubernetes cluster prices with their instances, public IPs and volumes breakdown.',
  section: 'cost',
  params: k8sPricesParams,

  async run(ctx, params, page) {
    const snapshots = await latestSnapshots(ctx.db, ['k8s_price']);
    const latestIds = snapshots.map((s) => s.id);
    const totalsNow = totals(ctx, params, latestIds);
    const [{ rows: all, total }, runRates, clusterTotals] = await Promise.all([
      footedRows(ctx, params, latestIds, totalsNow),
      // The run-rate per currency as the cost reports count it (every cluster, not the page's):
      // read from every team's figures, so not shown to a scoped user (the table's totals are theirs).
      scopeOf(ctx) ? Promise.resolve([]) : latestTotals(ctx.db, { kind: 'k8s_price', projectId: params.project, regionId: params.region }),
      totalsNow,
    ]);
    const rows = all.slice(page.offset, page.offset + page.limit);
    const currencies = [...new Set(rows.map((r) => r.currency).filter((c): c is string => typeof c === 'string'))].sort();
    return {
      title: 'Kubernetes cluster prices',
      summary: [{ label: 'Clusters', value: total, kind: 'int' }, ...runRateItems(runRates)],
      charts: currencies.map((currency) => {
        const mine = rows.filter((r) => r.currency === currency);
        return {
          id: `breakdown-${currency}`,
          title: `Breakdown per cluster (${currency} per hour)`,
          type: 'bar' as const,
          stacked: true,
          // One row per cluster: long names stay readable and none is skipped.
          horizontal: true,
          // Names repeat across scopes: the label carries the scope.
          labels: mine.map((r) => `${String(r.cluster_name)} (${String(r.scope)})`),
          datasets: PARTS.map((part) => ({ label: PART_LABELS[part], data: mine.map((r) => chartNumber(r[`${part}_per_hour`])) })),
          valueLabel: `${currency} per hour`,
          currency,
        };
      }),
      columns: COLUMNS,
      rows,
      totalRows: total,
      totals: clusterTotals,
      notes: [
        ...freshnessNotes(ctx.now, snapshots, 'Kubernetes prices'),
        'Breakdown sums add only items in the total\'s currency; the pricing endpoint\'s own total is what the cost reports use.',
      ],
    };
  },

  async export(ctx, params) {
    const latestIds = await latestSnapshotIds(ctx.db, ['k8s_price']);
    const sums = totals(ctx, params, latestIds);
    return { columns: COLUMNS, rows: listRows((await footedRows(ctx, params, latestIds, sums)).rows), totals: () => sums };
  },
  scoped: true,
}, { cached: true });
