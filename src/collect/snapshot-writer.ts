/**
 * The staging rule of a snapshot (see DATA-MODEL.md and the collection contract):
 *   1. a `snapshots` row with complete = false is inserted;
 *   2. rows are streamed in page by page with COPY (bulkCopy) into the unlogged staging tables,
 *      each page its own short statement
 *      (no transaction is held open across API calls: PGlite has a single connection, and a
 *      database transaction must not wait on a remote API with retries and backoff);
 *   3. ONE finalising transaction makes it visible: complete = true and row_count, the fold of
 *      its staged rows into versions (only new or changed rows are stored; see db/versions.ts;
 *      a backdated snapshot's rows move to the logged kept tables instead),
 *      presence (first/last seen, gone) and the cost rollups of priced kinds;
 *   4. on any failure the incomplete snapshot is deleted (its staged rows with it).
 * Reports read only complete snapshots, so a reader never sees a half-written one, and a failed
 * scope leaves the previous good snapshot the latest good one.
 */
import type { InferInsertModel } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { prepareBulkCopy, prepareBulkInsert, runBulkWrite, type PreparedBulkWrite } from '../db/bulk.js';
import type { Database, Queryable } from '../db/connection.js';
import { deleteSnapshots } from '../db/delete-snapshots.js';
import { writeCostRollups } from '../costing/derive/rollups.js';
import { PRICED_KINDS as COST_KINDS } from '../costing/pricing.js';
import type { SnapshotKind } from '../db/schema.js';
import { deleteOrphanStagedRows, foldSnapshot, VERSIONED_TABLES } from '../db/versions.js';
import { updatePresence } from './presence.js';
import type { RowCounts } from './types.js';

/** Kinds whose snapshots carry cost (cost_rollups are written when they are finalised). */
export const PRICED_KINDS: ReadonlySet<SnapshotKind> = new Set(COST_KINDS);

export interface SnapshotTarget {
  runId: number | null;
  kind: SnapshotKind;
  scopeKey: string;
  projectId: number | null;
  regionId: number | null;
  takenAt: Date;
}

export interface SnapshotOptions {
  /** Throws when the run must stop (asked to, or it lost its session or its run): called before each write. */
  checkpoint?: () => void;
}

export interface RowOptions {
  /** The kind the rows count as (default the snapshot's kind). */
  countAs?: string;
  /**
   * Skip rows whose key is already in the snapshot (a record repeated by shifting pages). Such
   * rows are written with INSERT ... ON CONFLICT DO NOTHING instead of COPY, which is about
   * twice as costly to the server: collectors of many rows remove repeats themselves instead.
   */
  onConflictDoNothing?: boolean;
}

/** A page of rows ready to be written to the snapshot (SnapshotWriter.prepare). */
export interface PreparedRows {
  readonly insert: PreparedBulkWrite;
  readonly countAs: string;
}

export class SnapshotWriter {
  private readonly counts: RowCounts = {};
  private state: 'open' | 'complete' | 'discarded' = 'open';
  /** Time spent in this snapshot's database writes (inserts and finalisation), in ms. */
  dbMs = 0;

  constructor(
    private readonly db: Database,
    readonly id: number,
    readonly target: SnapshotTarget,
    private readonly options: SnapshotOptions = {},
  ) {}

  /**
   * Appends rows (one page) in short statements outside any transaction. `countAs` names the
   * kind the rows count as (default the snapshot's kind; cluster servers count as `cluster_server`).
   */
  async insert<T extends PgTable>(table: T, rows: readonly InferInsertModel<T>[], options: RowOptions = {}): Promise<number> {
    return this.write(this.prepare(table, rows, options));
  }

  /**
   * The statements of a page of rows, without the rows (see PreparedBulkInsert): a collector
   * builds its page in a function that returns this, so the page's objects are garbage before
   * `write` waits on the database.
   */
  prepare<T extends PgTable>(table: T, rows: readonly InferInsertModel<T>[], options: RowOptions = {}): PreparedRows {
    this.assertOpen();
    const insert = options.onConflictDoNothing ? prepareBulkInsert(table, rows, { onConflictDoNothing: true }) : prepareBulkCopy(table, rows);
    return { insert, countAs: options.countAs ?? this.target.kind };
  }

  /** Writes prepared pages, one after the other; returns the rows inserted. */
  async write(...pages: PreparedRows[]): Promise<number> {
    this.assertOpen();
    this.options.checkpoint?.();
    let total = 0;
    for (const page of pages) {
      if (page.insert.rowCount === 0) continue;
      const started = performance.now();
      try {
        const inserted = await runBulkWrite(this.db, page.insert);
        this.counts[page.countAs] = (this.counts[page.countAs] ?? 0) + inserted;
        total += inserted;
      } finally {
        this.dbMs += performance.now() - started;
      }
    }
    return total;
  }

  /**
   * A statement on the snapshot's rows before it is finalised (e.g. merging duplicates), timed
   * with the writes. With `countAs`, the rows it affects count as rows of that kind (rows it adds).
   */
  async execute(text: string, params: readonly unknown[], options: { countAs?: string } = {}): Promise<number> {
    this.assertOpen();
    const started = performance.now();
    try {
      const affected = (await this.db.execute(text, params)).rowCount;
      if (options.countAs !== undefined) this.counts[options.countAs] = (this.counts[options.countAs] ?? 0) + affected;
      return affected;
    } finally {
      this.dbMs += performance.now() - started;
    }
  }

  /** Rows written so far, per kind. */
  rowCounts(): RowCounts {
    return { ...this.counts };
  }

  /** Rows of the snapshot's own kind (its row_count). */
  get rowCount(): number {
    return this.counts[this.target.kind] ?? 0;
  }

  /**
   * Makes the snapshot visible in one transaction. Refused (and the caller must discard) when
   * the run is no longer running, e.g. it was marked dead or force-stopped meanwhile.
   */
  async finalise(): Promise<RowCounts> {
    this.assertOpen();
    this.options.checkpoint?.();
    const started = performance.now();
    try {
      await this.db.transaction(async (tx) => {
        const done = await tx.execute(
          `UPDATE snapshots SET complete = true, row_count = $2
            WHERE id = $1 AND NOT complete
              AND (run_id IS NULL OR EXISTS (
                SELECT 1 FROM collection_runs r WHERE r.id = snapshots.run_id AND r.status = 'running'))`,
          [this.id, this.rowCount],
        );
        if (done.rowCount !== 1) {
          throw new Error(
            `snapshot ${this.id} (${this.target.kind} ${this.target.scopeKey}) cannot be completed: its run is no longer running or the snapshot is gone`,
          );
        }
        const snapshot = { id: this.id, kind: this.target.kind, scopeKey: this.target.scopeKey, takenAt: this.target.takenAt };
        // The fold first: presence and rollups then read the rows from versions, whose statistics
        // autovacuum keeps, and an unchanged snapshot copies the previous one's rollups.
        const fold = await foldSnapshot(tx, snapshot);
        if (!fold.folded) await analyseKept(tx, this.target.kind, this.rowCount);
        await updatePresence(tx, { ...snapshot, sameRowsAs: fold.sameRowsAs });
        if (PRICED_KINDS.has(this.target.kind)) await writeCostRollups(tx, this.id, fold.sameRowsAs);
      });
      this.state = 'complete';
      return this.rowCounts();
    } finally {
      this.dbMs += performance.now() - started;
    }
  }

  /** Deletes the incomplete snapshot and its rows. Never touches a complete one. */
  async discard(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'discarded';
    await this.db.transaction((tx) => deleteSnapshots(tx, 's.id = $1 AND NOT s.complete', [this.id]));
    // Pages written after the snapshot was deleted by someone else (its run marked dead).
    await deleteOrphanStagedRows(this.db, this.id);
  }

  private assertOpen(): void {
    if (this.state !== 'open') throw new Error(`snapshot ${this.id} is already ${this.state}`);
  }
}

/**
 * A kept table holds only the rows of the rare snapshots that are not folded, so its statistics
 * say "few rows" and the finalising statements over a big snapshot's rows (presence, rollups)
 * would be planned as nested loops over thousands of rows. A folded snapshot's rows are read from
 * versions by then (and the fold forces its joins); a big snapshot moved to kept (backfilled
 * history) refreshes the statistics of the key columns first.
 */
const ANALYSE_FROM_ROWS = 2_000;
async function analyseKept(db: Queryable, kind: SnapshotKind, rows: number): Promise<void> {
  if (rows < ANALYSE_FROM_ROWS) return;
  // Only the key columns: the row count and the keys are what the plans need, and sampling the
  // wide jsonb columns (raw, tags) made this the slowest step of finalising an unchanged
  // collection, more than the fold.
  for (const table of VERSIONED_TABLES) {
    if (table.kind === kind) await db.execute(`ANALYZE "${table.kept}" (${['snapshot_id', ...table.ids].map((c) => `"${c}"`).join(', ')})`);
  }
}

/**
 * Step 1 of the staging rule: an incomplete snapshot row, invisible to reports. Refused when the
 * run is no longer running (another process ended it while this one was not heard from).
 */
export async function openSnapshot(db: Database, target: SnapshotTarget, options: SnapshotOptions = {}): Promise<SnapshotWriter> {
  options.checkpoint?.();
  const rows = await db.query<{ id: number }>(
    `INSERT INTO snapshots (run_id, kind, scope_key, project_id, region_id, taken_at, complete)
     SELECT $1::int, $2::text, $3::text, $4::int, $5::int, $6::timestamptz, false
      WHERE $1::int IS NULL OR EXISTS (SELECT 1 FROM collection_runs r WHERE r.id = $1::int AND r.status = 'running')
     RETURNING id`,
    [target.runId, target.kind, target.scopeKey, target.projectId, target.regionId, target.takenAt],
  );
  if (!rows[0]) throw new Error(`collection run #${target.runId} is no longer running (ended by another process): no snapshot of ${target.kind} ${target.scopeKey} opened`);
  return new SnapshotWriter(db, rows[0].id, target, options);
}
