/**
 * Keyset export batches: every row once, in order, with the next batch fetched while the current
 * one is consumed, never more than one batch ahead, and nothing left dangling when the consumer
 * stops early.
 */
import { describe, expect, it } from 'vitest';
import { detailRows, keysetRows } from '../../src/reports/shared/batches.js';
import type { Row } from '../../src/reports/report.js';

const ROWS: Row[] = Array.from({ length: 10 }, (_, i) => ({ id: i + 1 }));

function source(fail?: { after: number }) {
  const calls: Array<number | null> = [];
  const fetch = async (after: number | null, limit: number): Promise<Row[]> => {
    calls.push(after);
    if (fail && after === fail.after) throw new Error(`batch after ${after} failed`);
    return ROWS.filter((r) => (r.id as number) > (after ?? 0)).slice(0, limit);
  };
  return { calls, fetch };
}

describe('keysetRows', () => {
  it('yields every row in order, fetching at most one batch ahead of the consumer', async () => {
    const { calls, fetch } = source();
    const seen: number[] = [];
    const fetchedWhenTaken: number[] = [];
    for await (const row of keysetRows<number>(fetch, (r) => r.id as number, 4)) {
      seen.push(row.id as number);
      fetchedWhenTaken.push(calls.length);
    }
    expect(seen).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // Batches 1-4, 5-8, 9-10 (short: the end). While rows 1-4 are consumed, 5-8 is on its way.
    expect(calls).toEqual([null, 4, 8]);
    expect(fetchedWhenTaken).toEqual([2, 2, 2, 2, 3, 3, 3, 3, 3, 3]);
  });

  it('stops cleanly when the consumer leaves early, even if the batch fetched ahead fails', async () => {
    const { calls, fetch } = source({ after: 4 });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const seen: number[] = [];
      for await (const row of keysetRows<number>(fetch, (r) => r.id as number, 4)) {
        seen.push(row.id as number);
        // A consumer that waits for I/O (a socket draining) between rows.
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (seen.length === 2) break;
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(seen).toEqual([1, 2]);
      expect(calls).toEqual([null, 4]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('passes a failing batch on to a consumer that reaches it', async () => {
    const { fetch } = source({ after: 4 });
    const seen: number[] = [];
    await expect(async () => {
      for await (const row of keysetRows<number>(fetch, (r) => r.id as number, 4)) seen.push(row.id as number);
    }).rejects.toThrow('batch after 4 failed');
    expect(seen).toEqual([1, 2, 3, 4]);
  });
});

describe('detailRows', () => {
  async function* keys(n: number): AsyncGenerator<Row> {
    for (let i = 1; i <= n; i++) yield { key: i };
  }

  it('yields the full rows of every key in the keys\' order, one chunk fetched ahead', async () => {
    const chunks: number[][] = [];
    const fetchDetails = async (chunk: Row[]) => {
      chunks.push(chunk.map((k) => k.key as number));
      return chunk.map((k) => ({ key: k.key, name: `row ${String(k.key)}` }));
    };
    const seen: Array<[number, number]> = [];
    for await (const row of detailRows(keys(7), fetchDetails, 3)) seen.push([row.key as number, chunks.length]);
    expect(seen.map(([key]) => key)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(chunks).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    // Rows of chunk 1 are yielded once chunk 2 has been asked for; the last two after the keys end.
    expect(seen.map(([, asked]) => asked)).toEqual([2, 2, 2, 3, 3, 3, 3]);
    const none: Row[] = [];
    for await (const row of detailRows(keys(0), fetchDetails, 3)) none.push(row);
    expect(none).toEqual([]);
  });

  it('throws a failed chunk when the consumer reaches it, and never leaves it unhandled', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const fetchDetails = async (chunk: Row[]) => {
        if (chunk[0]!.key === 3) throw new Error('details of 3-4 failed');
        return chunk;
      };
      const seen: number[] = [];
      await expect(async () => {
        for await (const row of detailRows(keys(6), fetchDetails, 2)) {
          seen.push(row.key as number);
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      }).rejects.toThrow('details of 3-4 failed');
      expect(seen).toEqual([1, 2]);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
