import { z } from 'zod';
import {
  STORAGE_KEY_LIST_DEFAULT_LIMIT,
  StorageKeyCreateBodySchema,
  StorageKeyIdSchema,
  StorageKeyListQuerySchema,
} from '../../cloud/schemas/requests.js';
import { HttpError, notFound } from '../http/errors.js';
import type { Router } from '../http/router.js';
import { ok } from '../http/types.js';
import { validateRequest } from '../http/validate.js';
import type { SimStorageKey } from '../model.js';
import { formatTimestamp } from '../timestamps.js';
import { storageKeyWire } from '../wire/keys.js';
import { createdStatus, wire } from './common.js';

type OrderBy = 'id' | 'name' | 'created_at';

const compare: Record<OrderBy, (a: SimStorageKey, b: SimStorageKey) => number> = {
  id: (a, b) => a.id - b.id,
  name: (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id),
  created_at: (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id - b.id,
};

/**
 * Filters (the spec names them without semantics): `id` matches the id exactly, `name` is a
 * case-insensitive substring, `created` a prefix of the ISO 8601 creation time (`2025-03` is a
 * month, `2025-03-04` a day).
 */
export function filterStorageKeys(
  keys: readonly SimStorageKey[],
  filter: { id?: string | undefined; name?: string | undefined; created?: string | undefined },
): SimStorageKey[] {
  const name = filter.name?.toLowerCase();
  return keys.filter(
    (k) =>
      (filter.id === undefined || String(k.id) === filter.id.trim()) &&
      (name === undefined || k.name.toLowerCase().includes(name)) &&
      (filter.created === undefined || formatTimestamp(k.createdAt, 'zulu').startsWith(filter.created.trim())),
  );
}

function isSorted<T>(items: readonly T[], order: (a: T, b: T) => number): boolean {
  for (let i = 1; i < items.length; i++) if (order(items[i - 1]!, items[i]!) > 0) return false;
  return true;
}

export function addStorageKeyRoutes(router: Router): void {
  /** A name already used answers 409 conflict. */
  router.add('PUT', '/storage/provisioning/v1/key', (ctx) => {
    const { body } = validateRequest({ body: StorageKeyCreateBodySchema }, { body: ctx.body });
    if (ctx.state.storageKeys().some((k) => k.name === body.name)) {
      throw new HttpError(409, 'conflict', `a storage key named '${body.name}' already exists`);
    }
    return ok(storageKeyWire(ctx.state.createStorageKey(body.name), wire(ctx)), createdStatus(ctx));
  });

  /** `{data, meta: {total_count, offset, limit}}`; default order id ascending. */
  router.add('GET', '/storage/provisioning/v2/key', (ctx) => {
    const { query } = validateRequest({ query: StorageKeyListQuerySchema }, { query: ctx.query });
    const offset = query.offset ?? 0;
    const limit = query.limit ?? STORAGE_KEY_LIST_DEFAULT_LIMIT;
    const all = ctx.state.storageKeys();
    const filtered = query.id === undefined && query.name === undefined && query.created === undefined ? all : filterStorageKeys(all, query);
    const order = compare[query.order_by ?? 'id'];
    const ordering = query.order_direction === 'desc' ? (a: SimStorageKey, b: SimStorageKey) => order(b, a) : order;
    // Keys are kept in id order: a page of a large unfiltered listing must not copy and sort them all.
    const matching = isSorted(filtered, ordering) ? filtered : [...filtered].sort(ordering);
    const w = wire(ctx);
    return ok({
      data: matching.slice(offset, offset + limit).map((k) => storageKeyWire(k, w)),
      meta: { total_count: matching.length, offset, limit },
    });
  });

  /** 204 without a body. */
  router.add('DELETE', '/storage/provisioning/v1/key/:key_id', (ctx) => {
    const { path } = validateRequest({ path: z.object({ key_id: StorageKeyIdSchema }) }, { path: ctx.params });
    if (!ctx.state.deleteStorageKey(path.key_id)) throw notFound(`storage key ${path.key_id} not found`);
    return { status: 204 };
  });
}
