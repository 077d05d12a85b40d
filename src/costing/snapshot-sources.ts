/**
 * The rows that pricing reads (pricedResourcesSql with `sources`), as CTEs read straight from the
 * versions and kept tables rather than through the views, and each pricing flavor snapshot's
 * catalogue: the form Citus plans (a view joins its two halves laterally across two colocation
 * groups, which it cannot). On Postgres and PGlite the CTEs referenced once are inlined.
 */
import { snapshotRowsSql, snapshotsRowsSql, versionedTable, type RowFilter } from '../db/versions.js';
import { SNAPSHOT_COLUMNS } from '../db/latest-snapshots.js';
import { flavorCatalogueSelectSql, flavorSnapshotSql, SOURCE_COLUMNS, type PricedKind, type SnapshotSources } from './pricing.js';

/** The CTE names pricedResourcesSql reads when given `sources: SOURCES`. */
export const SOURCES: SnapshotSources = {
  instances: 'src_instances',
  gpu_clusters: 'src_gpu_clusters',
  gpu_cluster_servers: 'src_gpu_cluster_servers',
  k8s_cluster_prices: 'src_k8s_cluster_prices',
  catalogue: 'src_catalogue',
};

type SourceView = keyof typeof SOURCE_COLUMNS & keyof SnapshotSources;

/** The views each kind's pricing reads. */
const VIEWS_OF: Record<PricedKind, readonly SourceView[]> = {
  instance: ['instances'],
  cluster: ['gpu_clusters', 'gpu_cluster_servers'],
  k8s_price: ['k8s_cluster_prices'],
};

/** Each source view's resource id (pricedResourcesSql's resource_id), for reading only some resources. */
const RESOURCE_ID_OF: Record<SourceView, string> = {
  instances: 'instance_id',
  gpu_clusters: 'cluster_id',
  gpu_cluster_servers: 'cluster_id',
  k8s_cluster_prices: 'cluster_name',
};

/** Which priced snapshots the CTEs read. */
export type PricedSnapshots =
  /** One snapshot: relation `s` (one row: id, ..., flavor_snapshot_id) and its id as an SQL expression (a parameter). */
  | { one: string; id: string }
  /** Every snapshot of relation `snaps` (columns of SNAPSHOT_COLUMNS and flavor_snapshot_id), referenced several times. */
  | { many: string };

/**
 * CTEs (a comma-separated list, to follow other CTEs) named as SOURCES, of the rows of the
 * snapshots in `snapshots` that pricing `kinds` reads, and the catalogues of their pricing flavor
 * snapshots (one row per flavor snapshot, by snapshot_id). `resources`: an SQL condition over a
 * resource id (a placeholder `$id` for the column) that limits the rows read, e.g. a batch's id
 * range; the condition reaches each table's scan, so the index on (scope_key, id) bounds it.
 * `materialized`: the rows are computed once; for a statement that reads all of them (its
 * filters given as `resources`), where the planner, misled by the estimate of a CTE's rows, would
 * otherwise compute them again for every snapshot of a nested loop.
 */
export function snapshotSourcesSql(
  kinds: PricedKind | readonly PricedKind[],
  snapshots: PricedSnapshots,
  opts: { resources?: string; materialized?: boolean } = {},
): string {
  const priced: readonly PricedKind[] = typeof kinds === 'string' ? [kinds] : kinds;
  const { resources } = opts;
  const filterOf = (view: SourceView): RowFilter | undefined =>
    resources ? (alias) => resources.replaceAll('$id', `${alias}."${RESOURCE_ID_OF[view]}"`) : undefined;
  const rowsOf = (view: SourceView) => {
    const table = versionedTable(view);
    if ('many' in snapshots) return snapshotsRowsSql(table, SOURCE_COLUMNS[view], snapshots.many, filterOf(view));
    return snapshotRowsSql(table, `${snapshots.id}::int as snapshot_id, ${SOURCE_COLUMNS[view].map((c) => `"${c}"`).join(', ')}`, snapshots.id, filterOf(view));
  };
  const as = opts.materialized ? 'as materialized' : 'as';
  const ctes = priced.flatMap((kind) => VIEWS_OF[kind]).map((view) => `${SOURCES[view]} ${as} (${rowsOf(view)})`);
  if (priced.some((kind) => kind !== 'k8s_price')) {
    const pricedRelation = 'many' in snapshots ? snapshots.many : snapshots.one;
    const flavorSnapshots = `(select f.id, f.kind, f.scope_key, f.taken_at, f.versioned from snapshots f where f.id in (select flavor_snapshot_id from ${pricedRelation}))`;
    ctes.push(`src_flavors as (${snapshotsRowsSql(versionedTable('gpu_flavors'), SOURCE_COLUMNS.gpu_flavors, flavorSnapshots)})`);
    // Materialized: a few rows computed once; inlined, the planner re-aggregated it for every resource row.
    ctes.push(`${SOURCES.catalogue} as materialized (${flavorCatalogueSelectSql('src_flavors', undefined, 'snapshot_id')})`);
  }
  return ctes.join(',\n  ');
}

/**
 * SQL (a SELECT) of the snapshots whose ids are in `ids` (a parenthesised subquery written by
 * code), with the flavor snapshot pricing each (flavor_snapshot_id): the `many` relation of
 * snapshotSourcesSql. Reads only the snapshots table, which Citus answers in one place.
 */
export function pricedSnapshotsSql(ids: string): string {
  return `select ${SNAPSHOT_COLUMNS.map((c) => `s.${c}`).join(', ')}, ${flavorSnapshotSql('s')} as flavor_snapshot_id from snapshots s where s.id in ${ids}`;
}
