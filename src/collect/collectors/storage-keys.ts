/**
 * Storage SSH keys (global, not per scope), every page, one after another until a short page. A
 * page of 1,000 keys is ~80 KB: it takes a work slot, not one of the run's slots for big pages
 * (holding those, the keys' 100 pages kept the instance pages waiting while the cores idled), and
 * one page at a time is enough: alongside the big pages, two or more in flight raised the
 * collection's peak RSS to 393-461 MB (target < 400) for no steady gain in time. A key seen twice
 * (offsets shifted by a key created during the listing) is stored once: the first copy is kept.
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
    const fetchPage = async (offset: number) => {
      const list = await ctx.client.listStorageKeys({ limit: PAGE_SIZE, offset });
      return { rows: prepare(writer, unit, list.data, seen), count: list.data.length };
    };
    for (let offset = 0; ; offset += PAGE_SIZE) {
      ctx.checkpoint();
      const count = await ctx.limiter.run(async () => {
        const fetched = await fetchPage(offset);
        await writer.write(fetched.rows);
        return fetched.count;
      });
      if (count < PAGE_SIZE) return;
    }
  },
};

/** The page's keys not in `seen` (which they are added to), ready to write. */
function prepare(writer: SnapshotWriter, unit: Unit, keys: readonly StorageKey[], seen: Set<string>): PreparedRows {
  const rc = rowContext(writer, unit);
  const rows = keys.map((k) => mapStorageKey(k, rc)).filter((row) => firstSighting(seen, row.keyId));
  return writer.prepare(storageSshKeys, rows);
}

