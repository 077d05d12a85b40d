/**
 * Export rows in batches so memory stays flat however many rows match: each batch is one query
 * (keyset: "after the last key" on an index order; or LIMIT/OFFSET where a keyset is not possible),
 * and the next batch is fetched only when the consumer has taken the previous one.
 */
import type { Row } from '../report.js';

export const EXPORT_BATCH = 2_000;

/** Rows from fetch(after, limit) until a short batch; `after` is the key of the last row yielded. */
export async function* keysetRows<K>(
  fetch: (after: K | null, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => K,
  batchSize = EXPORT_BATCH,
): AsyncGenerator<Row> {
  let after: K | null = null;
  for (;;) {
    const rows = await fetch(after, batchSize);
    for (const row of rows) yield row;
    if (rows.length < batchSize) return;
    after = keyOf(rows[rows.length - 1]!);
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
