/**
 * Storage SSH keys (global, not per scope), every page. The first page tells the total
 * (`meta.total_count`), so the remaining pages are fetched concurrently within the run's limit;
 * then, in case keys were added meanwhile, pages are read on from the end until a short one.
 * Without a total, pages are read one after another. A key seen twice (offsets shifted by a key
 * created during the listing) is stored once: the first copy is kept.
 */
import { looseInt, STORAGE_KEY_LIST_MAX_LIMIT, type StorageKey } from '../../cloud/schemas/index.js';
import { GLOBAL_SCOPE, storageSshKeys } from '../../db/schema.js';
import { forEachLimited } from '../concurrency.js';
import { mapStorageKey } from '../mappers.js';
import type { PreparedRows, SnapshotWriter } from '../snapshot-writer.js';
import { firstSighting, rowContext, type Collector, type Unit } from './collector.js';

const PAGE_SIZE = STORAGE_KEY_LIST_MAX_LIMIT;

export const storageKeysCollector: Collector = {
  name: 'storage_keys',
  kind: 'storage_key',
  phase: 2,
  units: () => [{ scopeKey: GLOBAL_SCOPE, projectId: null, regionId: null, scope: null }],
  async collect(writer, unit, ctx) {
    const seen = new Set<string>();
    /**
     * Fetches and writes one page; returns how many keys it held. A page of 1,000 keys is ~80 KB:
     * it takes a work slot, not one of the slots for big pages (holding those, the keys' 100 pages
     * kept the instance pages waiting while the cores idled).
     */
    const page = (offset: number): Promise<{ count: number; total: number | null }> =>
      ctx.limiter.run(async () => {
        const fetched = await fetchPage(offset);
        await writer.write(fetched.rows);
        return { count: fetched.count, total: fetched.total };
      });
    /** A page of keys ready to write (the records let go before the write waits on the database). */
    const fetchPage = async (offset: number) => {
      const list = await ctx.client.listStorageKeys({ limit: PAGE_SIZE, offset });
      const total = looseInt.safeParse(list.meta['total_count']);
      return { rows: prepare(writer, unit, list.data, seen), count: list.data.length, total: total.success ? total.data : null };
    };

    ctx.checkpoint();
    const first = await page(0);
    if (first.count < PAGE_SIZE) return;
    let next = PAGE_SIZE;
    if (first.total !== null && first.total > next) {
      const offsets: number[] = [];
      for (let offset = next; offset < first.total; offset += PAGE_SIZE) offsets.push(offset);
      let lastCount = PAGE_SIZE;
      // Two pages in flight, as for big pages: eight raised the collection's peak RSS past 400 MB.
      await forEachLimited(offsets, ctx.pageLimiter.size, async (offset) => {
        ctx.checkpoint();
        const { count } = await page(offset);
        if (offset === offsets[offsets.length - 1]) lastCount = count;
      });
      next = offsets[offsets.length - 1]! + PAGE_SIZE;
      if (lastCount < PAGE_SIZE) return;
    }
    // No total, or the last page was full: read on until a short page.
    for (;;) {
      ctx.checkpoint();
      const { count } = await page(next);
      if (count < PAGE_SIZE) return;
      next += PAGE_SIZE;
    }
  },
};

/** The page's keys not in `seen` (which they are added to), ready to write. */
function prepare(writer: SnapshotWriter, unit: Unit, keys: readonly StorageKey[], seen: Set<string>): PreparedRows {
  const rc = rowContext(writer, unit);
  const rows = keys.map((k) => mapStorageKey(k, rc)).filter((row) => firstSighting(seen, row.keyId));
  return writer.prepare(storageSshKeys, rows);
}

