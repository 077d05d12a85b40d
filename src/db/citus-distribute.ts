/**
 * Places every table of a migrated database on a Citus coordinator as src/db/distribution.ts
 * says (`npm run cli -- distribute`): reference tables, distributed tables colocated by the type
 * of their distribution column, local tables left alone. Reads the Citus catalog first, so a table
 * already placed is left as it is and a second run changes nothing.
 */
import type { Database, Queryable } from './connection.js';
import { DISTRIBUTED_TABLES, placementOf, type Placement } from './distribution.js';
import { quoteIdent } from './sql-literal.js';
import { fixIdentitySequences, type SequenceFix } from './citus-sequences.js';

export class NotCitusError extends Error {
  constructor(target: string) {
    super(
      `${target} is not a Citus coordinator: the citus extension is not created in this database. ` +
        'Install Citus, run CREATE EXTENSION citus and add the workers (citus_add_node), then run distribute again; ' +
        'nothing was changed.',
    );
    this.name = 'NotCitusError';
  }
}

export class PlacementError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PlacementError';
  }
}

export type TableAction = 'distributed' | 'already placed' | 'left local';

export interface TableOutcome {
  table: string;
  placement: Placement;
  action: TableAction;
  /** Distributed tables: the distribution column and the table colocated with ('none': a new group). */
  column?: string;
  colocateWith?: string;
}

export interface DistributeSummary {
  citusVersion: string;
  tables: TableOutcome[];
  sequences: SequenceFix[];
  /** False when the run found everything placed and every sequence right (nothing changed). */
  changed: boolean;
}

interface CatalogTable {
  table: string;
  method: string | null;
  replication: string | null;
  colocationId: number | null;
  column: string | null;
  columnType: string | null;
}

/** The installed citus version in this database, or null on plain Postgres. */
export async function citusVersion(db: Queryable): Promise<string | null> {
  const rows = await db.query<{ version: string }>(`select extversion as version from pg_extension where extname = 'citus'`);
  return rows[0]?.version ?? null;
}

/**
 * Distributes every table the plan places and Citus does not hold yet, then fixes the identity
 * sequences. Runs on one session under an advisory lock (two runs at once take turns), with the
 * Citus settings distribution needs set on that session only.
 */
export async function distributeTables(
  db: Database,
  options: { onTable?: (outcome: TableOutcome) => void } = {},
): Promise<DistributeSummary> {
  const version = await citusVersion(db);
  if (!version) throw new Error('distributeTables needs the citus extension (check citusVersion first)');
  const run = await db.withAdvisoryLock('cloudtally:distribute', async (session) => {
    // The staged-rows trigger on snapshots (migration 0017) is refused without this; the session
    // goes back to the pool afterwards, so the setting is reset there.
    await session.query(`set citus.enable_unsafe_triggers = on`);
    try {
      return await placeAll(session, version, options.onTable);
    } finally {
      await session.query(`reset citus.enable_unsafe_triggers`);
    }
  });
  if (!run.acquired) throw new Error('distribute: the advisory lock cloudtally:distribute was not acquired');
  return run.value;
}

async function placeAll(session: Queryable, version: string, onTable?: (outcome: TableOutcome) => void): Promise<DistributeSummary> {
  const catalog = await readCatalog(session);
  const unplaced = catalog.filter((t) => placementOf(t.table) === null).map((t) => t.table);
  if (unplaced.length > 0) {
    throw new PlacementError(`tables without a placement in src/db/distribution.ts: ${unplaced.join(', ')}; place them there first, nothing was changed`);
  }
  const outcomes: TableOutcome[] = [];
  const report = (outcome: TableOutcome) => {
    outcomes.push(outcome);
    onTable?.(outcome);
  };
  const byName = new Map(catalog.map((t) => [t.table, t]));
  const order = await placementOrder(session, catalog.map((t) => t.table));
  for (const table of order) {
    const current = byName.get(table)!;
    const placement = placementOf(table)!;
    if (placement === 'local') report({ table, placement, action: 'left local' });
    else if (placement === 'reference') report(await placeReference(session, current));
    else report(await placeDistributed(session, current, byName));
  }
  const sequences = await fixIdentitySequences(session, order.filter((t) => placementOf(t) !== 'local'));
  return {
    citusVersion: version,
    tables: outcomes,
    sequences,
    changed: sequences.length > 0 || outcomes.some((o) => o.action === 'distributed'),
  };
}

async function placeReference(session: Queryable, current: CatalogTable): Promise<TableOutcome> {
  const { table } = current;
  if (current.method === 'n' && current.replication === 't') return { table, placement: 'reference', action: 'already placed' };
  if (current.method !== null && current.method !== 'n') {
    throw new PlacementError(`${table} is planned as a reference table but Citus holds it as partition method '${current.method}'; change it by hand (undistribute_table), nothing more was changed`);
  }
  await runPlacement(table, () => session.query(`select create_reference_table($1::regclass)`, [quoteIdent(table)]));
  await truncateLocalCopy(session, table);
  return { table, placement: 'reference', action: 'distributed' };
}

async function placeDistributed(session: Queryable, current: CatalogTable, byName: Map<string, CatalogTable>): Promise<TableOutcome> {
  const { table } = current;
  const column = DISTRIBUTED_TABLES[table]!;
  if (current.method === 'h') {
    if (current.column !== column) {
      throw new PlacementError(`${table} is distributed by ${current.column ?? '?'} but planned by ${column}; change it by hand (alter_distributed_table), nothing more was changed`);
    }
    return { table, placement: 'distributed', action: 'already placed', column };
  }
  if (current.method !== null && !(current.method === 'n' && current.replication === 's')) {
    throw new PlacementError(`${table} is planned as distributed by ${column} but Citus holds it as partition method '${current.method}'; nothing more was changed`);
  }
  const colocateWith = colocationPartner(table, current.columnType, byName);
  await runPlacement(table, () =>
    session.query(`select create_distributed_table($1::regclass, $2, colocate_with => $3)`, [quoteIdent(table), column, colocateWith]),
  );
  await truncateLocalCopy(session, table);
  // Later tables of the group colocate with this one.
  byName.set(table, { ...current, method: 'h', column });
  return { table, placement: 'distributed', action: 'distributed', column, colocateWith };
}

/** Tables distributed by a column of the same type form one colocation group: the first one already distributed, else a new group. */
function colocationPartner(table: string, columnType: string | null, byName: Map<string, CatalogTable>): string {
  for (const [name, other] of byName) {
    if (name !== table && other.method === 'h' && name in DISTRIBUTED_TABLES && other.columnType === columnType) return name;
  }
  return 'none';
}

/**
 * Citus copies a table's rows into its shards and keeps the originals, unread, in the coordinator's
 * shell table; they only take space, so they go.
 */
async function truncateLocalCopy(session: Queryable, table: string): Promise<void> {
  await runPlacement(table, () => session.query(`select truncate_local_data_after_distributing_table($1::regclass)`, [quoteIdent(table)]));
}

async function runPlacement(table: string, run: () => Promise<unknown>): Promise<void> {
  try {
    await run();
  } catch (err) {
    throw new PlacementError(`placing ${table} on Citus failed (the tables before it are placed; run distribute again after fixing): ${(err as Error).message}`, { cause: err });
  }
}

/** Every table of the public schema (partitions aside) with what the Citus catalog says of it. */
async function readCatalog(session: Queryable): Promise<CatalogTable[]> {
  const rows = await session.query<{ table: string; method: string | null; replication: string | null; colocation_id: number | null; column: string | null }>(
    `select c.relname as table, p.partmethod::text as method, p.repmodel::text as replication, p.colocationid as colocation_id,
            case when p.partmethod = 'h' then column_to_column_name(p.logicalrelid, p.partkey) end as column
     from pg_class c join pg_namespace n on n.oid = c.relnamespace
     left join pg_dist_partition p on p.logicalrelid = c.oid
     where n.nspname = 'public' and c.relkind in ('r', 'p') and not c.relispartition
     order by c.relname`,
  );
  const plan = Object.entries(DISTRIBUTED_TABLES);
  const types = await session.query<{ table: string; type: string }>(
    `select plan.table_name as table, format_type(a.atttypid, a.atttypmod) as type
     from unnest($1::text[], $2::text[]) as plan(table_name, column_name)
     join pg_class c on c.relname = plan.table_name and c.relnamespace = 'public'::regnamespace
     join pg_attribute a on a.attrelid = c.oid and a.attname = plan.column_name and not a.attisdropped`,
    [plan.map(([t]) => t), plan.map(([, c]) => c)],
  );
  const typeOf = new Map(types.map((t) => [t.table, t.type]));
  return rows.map((r) => ({
    table: r.table,
    method: r.method,
    replication: r.replication,
    colocationId: r.colocation_id,
    column: r.column,
    columnType: typeOf.get(r.table) ?? null,
  }));
}

/**
 * Reference tables first, then distributed ones (a foreign key to a reference table is accepted
 * only once the target is one); inside each, a table after the tables its foreign keys point to.
 */
async function placementOrder(session: Queryable, tables: string[]): Promise<string[]> {
  const edges = await session.query<{ table: string; target: string }>(
    `select s.relname as table, t.relname as target from pg_constraint c
     join pg_class s on s.oid = c.conrelid join pg_class t on t.oid = c.confrelid
     join pg_namespace n on n.oid = s.relnamespace
     where n.nspname = 'public' and c.contype = 'f' and s.oid <> t.oid`,
  );
  const rank: Record<Placement, number> = { reference: 0, distributed: 1, local: 2 };
  const sorted = [...tables].sort((a, b) => rank[placementOf(a)!] - rank[placementOf(b)!] || a.localeCompare(b));
  const targets = new Map<string, string[]>();
  for (const e of edges) targets.set(e.table, [...(targets.get(e.table) ?? []), e.target]);
  const done = new Set<string>();
  const order: string[] = [];
  const visit = (table: string, path: Set<string>) => {
    if (done.has(table) || path.has(table)) return;
    path.add(table);
    for (const target of targets.get(table) ?? []) if (tables.includes(target)) visit(target, path);
    done.add(table);
    order.push(table);
  };
  for (const table of sorted) visit(table, new Set());
  return order;
}
