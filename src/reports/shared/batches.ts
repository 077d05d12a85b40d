/**
 * Export rows in batches so memory stays flat however many rows match: each batch is one query
 * (keyset: "after the last key" on an index order; or LIMIT/OFFSET where a keyset is not possible).
 * Keyset exports fetch one batch ahead, so the database works on the next batch while the
 * consumer formats and sends the current one; never more than two batches are held.
 */
import type { Row } from '../report.js';

/**
 * Rows per export query. Measured on the 100,000-instance inventory export (bench/reports.ts,
 * 10,000 rows per snapshot): 2,000 -> 3.3-4.2 s, 5,000 -> 2.5-2.6 s, 10,000 -> 2.7-3.0 s; each
 * batch sorts the rows of its snapshots, so small batches repeat that work, and large ones hold
 * more rows at once.
 */
export const EXPORT_BATCH = 5_000;

/** Rows from fetch(after, limit) until a short batch; `after` is the key of the last row yielded. */
export async function* keysetRows<K>(
  fetch: (after: K | null, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => K,
  batchSize = EXPORT_BATCH,
): AsyncGenerator<Row> {
  // A batch fetched ahead may fail while the consumer is still busy (e.g. waiting for the socket
  // to drain): its outcome is captured at once, so the failure is never an unhandled rejection;
  // it is thrown when the consumer reaches that batch, and dropped if the consumer stops first.
  type Outcome = { rows: Row[] } | { error: unknown };
  const ahead = (after: K | null): Promise<Outcome> =>
    fetch(after, batchSize).then(
      (rows) => ({ rows }),
      (error: unknown) => ({ error }),
    );
  let next: Promise<Outcome> | null = ahead(null);
  while (next) {
    const batch: Outcome = await next;
    if ('error' in batch) throw batch.error;
    const rows: Row[] = batch.rows;
    next = rows.length < batchSize ? null : ahead(keyOf(rows[rows.length - 1]!));
    for (const row of rows) yield row;
  }
}

/** Rows from fetch(limit, offset) until a short batch. */
export async function* offsetRows(fetch: (limit: number, offset: number) => Promise<Row[]>, batchSize = EXPORT_BATCH): AsyncGenerator<Row> {
  for (let offset = 0; ; offset += batchSize) {
    const rows = await fetch(batchSize, offset);
    for (const row of rows) yield row;
    if (rows.length < batchSize) return;
  }
}

/** An already computed (small) list as an export. */
export async function* listRows(rows: readonly Row[]): AsyncGenerator<Row> {
  yield* rows;
}
