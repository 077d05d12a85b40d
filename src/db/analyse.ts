/**
 * Table statistics kept fresh after collections. The reports' plans depend on them: with the
 * presence table never analysed, the planner took a scope's presence rows for one and read all of
 * them for every row of the inventory export (seconds instead of milliseconds at 10,000
 * instances). Postgres's autovacuum analyses a table once 50 rows plus 10 % of it changed; PGlite
 * runs no autovacuum, and a server may run without it. This applies the same rule after each run.
 */
import type { Queryable } from './connection.js';

/** Autovacuum's defaults: a table is analysed once this many rows plus this share of it changed. */
const ANALYSE_BASE_ROWS = 50;
const ANALYSE_SHARE = 0.1;

/**
 * ANALYZE of every logged table of the public schema never analysed, or whose rows changed past
 * autovacuum's threshold since it was last analysed; returns their names. The change counts are
 * the statistics system's, which each connection reports within a second or so of its writes. On
 * Citus the coordinator counts the changes of its own tables only (a distributed table's rows are
 * on the workers, whose autovacuum analyses its shards).
 */
export async function analyseChangedTables(db: Queryable): Promise<string[]> {
  const stale = await db.query<{ table: string }>(
    `select t.relname as table from pg_stat_user_tables t join pg_class c on c.oid = t.relid
      where t.schemaname = 'public' and c.relpersistence = 'p'
        and (c.reltuples < 0 or t.n_mod_since_analyze > $1::int + $2::float8 * greatest(t.n_live_tup, 0))
      order by t.relname`,
    [ANALYSE_BASE_ROWS, ANALYSE_SHARE],
  );
  for (const { table } of stale) await db.execute(`ANALYZE "${table.replaceAll('"', '""')}"`);
  return stale.map((t) => t.table);
}
