/**
 * Export rows in batches so memory stays flat however many rows match: each batch is one query
 * (keyset: "after the last key" on an index order; or LIMIT/OFFSET where a keyset is not possible).
 * Keyset exports fetch one batch ahead, so the database works on the next batch while the
 * consumer formats and sends the current one; never more than two batches are held.
 */
import type { Row } from '../report.js';

/**
 * Rows per export query where one query reads whole rows (the inventory reads keys and rows
 * separately, see inventory.ts): large enough that per-query costs do not dominate, small enough
 * that two batches in memory stay a few MB.
 */
export const EXPORT_BATCH = 5_000;

type Outcome = { rows: Row[] } | { error: unknown };

/**
 * A batch fetched ahead may fail while the consumer is still busy (e.g. waiting for the socket to
 * drain): its outcome is captured at once, so the failure is never an unhandled rejection; it is
 * thrown when the consumer reaches that batch, and dropped if the consumer stops first.
 */
function settle(batch: Promise<Row[]>): Promise<Outcome> {
  return batch.then(
    (rows) => ({ rows }),
    (error: unknown) => ({ error }),
  );
}

function rowsOf(outcome: Outcome): Row[] {
  if ('error' in outcome) throw outcome.error;
  return outcome.rows;
}

/** Rows from fetch(after, limit) until a short batch; `after` is the key of the last row yielded. */
export async function* keysetRows<K>(
  fetch: (after: K | null, limit: number) => Promise<Row[]>,
  keyOf: (row: Row) => K,
  batchSize = EXPORT_BATCH,
): AsyncGenerator<Row> {
  let next: Promise<Outcome> | null = settle(fetch(null, batchSize));
  while (next) {
    const rows: Row[] = rowsOf(await next);
    next = rows.length < batchSize ? null : settle(fetch(keyOf(rows[rows.length - 1]!), batchSize));
    for (const row of rows) yield row;
  }
}

/**
 * The full rows of `keys`, in their order, read in chunks of `chunkSize` keys (`fetchDetails`
 * returns a chunk's rows in the chunk's order), the next chunk fetched while the current one is
 * consumed. With the keys read in large pages (keysetRows over a query that reads only keys) and
 * the wide rows in small chunks, each query's cost follows its own size and few full rows are
 * alive at once.
 */
export async function* detailRows(keys: AsyncIterable<Row>, fetchDetails: (keys: Row[]) => Promise<Row[]>, chunkSize: number): AsyncGenerator<Row> {
  let pending: Promise<Outcome> | null = null;
  let chunk: Row[] = [];
  for await (const key of keys) {
    chunk.push(key);
    if (chunk.length < chunkSize) continue;
    const ready: Promise<Outcome> | null = pending;
    pending = settle(fetchDetails(chunk));
    chunk = [];
    if (ready) yield* rowsOf(await ready);
  }
  const ready: Promise<Outcome> | null = pending;
  pending = chunk.length > 0 ? settle(fetchDetails(chunk)) : null;
  if (ready) yield* rowsOf(await ready);
  if (pending) yield* rowsOf(await pending);
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
