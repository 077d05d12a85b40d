/**
 * Storage SSH keys (global, not per scope), every page until a short one, the next page fetched
 * while the previous one is written (the keys' 100 pages at 100,000 instances are the run's
 * longest chain: one after another they ended the collection). A page of 1,000 keys is ~80 KB: it
 * takes a work slot, not one of the run's slots for big pages (holding those, the keys' pages kept
 * the instance pages waiting while the cores idled). A key seen twice (offsets shifted by a key
 * created during the listing) is stored once: the first copy is kept.
 */
import { STORAGE_KEY_LIST_MAX_LIMIT, type StorageKey } from '../../cloud/schemas/index.js';
import { GLOBAL_SCOPE, storageSshKeys } from '../../db/schema.js';
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
    /** A page of keys ready to write (the records let go before the write waits on the database). */
    const fetchPage = (offset: number) =>
      ctx.limiter.run(async () => {
        const list = await ctx.client.listStorageKeys({ limit: PAGE_SIZE, offset });
        return { rows: prepare(writer, unit, list.data, seen), count: list.data.length };
      });
    ctx.checkpoint();
    let next = fetchPage(0);
    for (let offset = 0; ; offset += PAGE_SIZE) {
      const page = await next;
      const more = page.count === PAGE_SIZE;
      if (more) {
        ctx.checkpoint();
        next = fetchPage(offset + PAGE_SIZE);
        // Awaited on the next turn; until then a failure must not count as unhandled.
        next.catch(() => undefined);
      }
      try {
        await ctx.limiter.run(() => writer.write(page.rows));
      } catch (err) {
        if (more) await next.catch(() => undefined); // settle the fetch ahead before the unit fails
        throw err;
      }
      if (!more) return;
    }
  },
};

/** The page's keys not in `seen` (which they are added to), ready to write. */
function prepare(writer: SnapshotWriter, unit: Unit, keys: readonly StorageKey[], seen: Set<string>): PreparedRows {
  const rc = rowContext(writer, unit);
  const rows = keys.map((k) => mapStorageKey(k, rc)).filter((row) => firstSighting(seen, row.keyId));
  return writer.prepare(storageSshKeys, rows);
}

