/**
 * A short-lived, per-process cache of report results. A result is reused only while the data it
 * was computed from is unchanged: every lookup first reads the data version (one cheap query),
 * so a collection that finishes, a snapshot pruned or a day sealed makes the next request compute
 * afresh. Figures such as ages, month to date and the projection move with the clock, so a result
 * is fresh for `ttlMs` of the report's `now`; after that, while the data is unchanged and for at
 * most `staleMs`, it is still served at once while a new one is computed in the background
 * (stale-while-revalidate), so nobody waits for a recomputation that only the clock asked for.
 *
 * Only reports whose every input is snapshot data (snapshots, their rows, cost_rollups,
 * cost_daily) may be cached, or, with the actions version, also stops and scheduled stops (the
 * inventory); reports over runs or the audit log's contents must not be.
 * Exports (CSV) are never cached: they stream.
 */
import type { Queryable } from '../../db/connection.js';
import type { ReportCacheOutcome } from '../report.js';

/**
 * The data version: changes whenever the set of complete snapshots changes (a snapshot completes
 * or is deleted: ids only grow, so count, max and sum together tell any two sets apart that
 * occur in practice), a day's cost is sealed, or a day is closed (its cost_daily rows written:
 * the figures do not change, but what they are read from does, and the cache must not hide that;
 * the sum of the closing times also tells a day closed anew when it is not the latest closing).
 */
const DATA_VERSION_SQL = `select concat_ws(':', count(*), max(id), sum(id), (select count(*) from cost_daily_sealed_days),
    (select concat(count(*), '@', max(closed_at), '@', sum(extract(epoch from closed_at))) from cost_daily_closed_days)) as v
  from snapshots where complete`;

/**
 * What reports that also show actions read on top of the snapshots: stops (the audit log is
 * append-only, so its newest id changes with every attempt, and instance_status_overrides derives
 * from it and the snapshots) and scheduled stops (a new one raises the newest id; cancelling or
 * finishing one changes how many are open).
 */
const ACTIONS_VERSION_SQL = `select concat_ws(':', (select max(id) from audit_log), (select max(id) from scheduled_stops),
  (select count(*) from scheduled_stops where status in ('pending', 'running'))) as v`;

/** Both versions in one round trip: a cached report asks at every request. */
const DATA_AND_ACTIONS_VERSION_SQL = `select concat((${DATA_VERSION_SQL}), '|', (${ACTIONS_VERSION_SQL})) as v`;

export async function dataVersion(q: Queryable, options: { actions?: boolean } = {}): Promise<string> {
  const [row] = await q.query<{ v: string }>(options.actions ? DATA_AND_ACTIONS_VERSION_SQL : DATA_VERSION_SQL);
  return row?.v ?? '';
}

/** The versions read so far per context made by oneDataVersion (by the `actions` option). */
const versionsOfRequest = new WeakMap<object, Map<boolean, Promise<string>>>();

/** Per database (by the `actions` option): the version read under way for requests, if any. */
const readsUnderWay = new WeakMap<object, Map<boolean, Promise<string>>>();

/**
 * The data version for a request: requests arriving while another request's read is under way
 * share it (one query for many users, and their versions arrive in the order they asked, so
 * the instant of a version and the result computed for it are those of the first of them, and
 * the others are served that result: see ReportCache.get). The read began at most one round
 * trip before the request arrived.
 */
function requestVersion(db: Queryable, actions: boolean): Promise<string> {
  let underWay = readsUnderWay.get(db);
  if (!underWay) readsUnderWay.set(db, (underWay = new Map()));
  const known = underWay.get(actions);
  if (known) return known;
  const read = dataVersion(db, { actions });
  underWay.set(actions, read);
  const done = () => {
    if (underWay.get(actions) === read) underWay.delete(actions);
  };
  read.then(done, done);
  return read;
}

/**
 * A copy of a report context that reads each data version once: everything one request computes
 * with it (an HTML page's rows and its filters) is of one version, read in one round trip instead
 * of one per cached lookup (shared with the requests arriving while it is under way). For one
 * request only: a context kept longer would keep its version after a collection.
 */
export function oneDataVersion<C extends object>(ctx: C): C {
  const copy = { ...ctx };
  versionsOfRequest.set(copy, new Map());
  return copy;
}

/** A copy of `ctx` computing for `now` that shares the data versions its request already read (oneDataVersion). */
export function withNow<C extends object & { now: Date }>(ctx: C, now: Date): C {
  const copy = { ...ctx, now };
  const read = versionsOfRequest.get(ctx);
  if (read) versionsOfRequest.set(copy, read);
  return copy;
}

/** The data version for `ctx`: read now, or the one its request already read (oneDataVersion). */
export function dataVersionOf(ctx: { db: Queryable }, options: { actions?: boolean } = {}): Promise<string> {
  const read = versionsOfRequest.get(ctx);
  if (!read) return dataVersion(ctx.db, options);
  const actions = options.actions ?? false;
  let version = read.get(actions);
  if (!version) {
    version = requestVersion(ctx.db, actions);
    read.set(actions, version);
    // A failed read is not kept: the next lookup reads again and reports its own error.
    version.catch(() => {
      if (read.get(actions) === version) read.delete(actions);
    });
  }
  return version;
}

export interface CacheOptions {
  /** How long a result is fresh, measured on the reports' clock (ctx.now); 0 = never reused. */
  ttlMs: number;
  /**
   * Up to this age (same data version), a result past ttlMs is served while its successor is
   * computed in the background; older ones are computed while the request waits.
   */
  staleMs: number;
  /** Entries kept per database and configuration; the oldest go first. */
  maxEntries: number;
}

export const DEFAULT_CACHE_OPTIONS: CacheOptions = { ttlMs: 60_000, staleMs: 15 * 60_000, maxEntries: 500 };

interface Entry {
  version: string;
  now: number;
  value: Promise<unknown>;
  /** The computation has ended (until then, every lookup of its key and version shares it). */
  settled?: boolean;
  /** A background recomputation of this entry is under way. */
  refreshing?: boolean;
}

/**
 * How a lookup was answered: `fresh`, a result computed within ttlMs; `shared`, a computation
 * under way for the same key and data version (single flight, whatever ttlMs); `stale`, a result
 * past ttlMs served while its successor is computed; `computed`, a new computation.
 */
export type CacheOutcome = ReportCacheOutcome;

/**
 * Results per (database, configuration) object, so tests and processes with several databases
 * never share entries; keys are the caller's (report, operation, parameters, page).
 */
export class ReportCache {
  private readonly stores = new WeakMap<object, WeakMap<object, Map<string, Entry>>>();
  /** Per (database, configuration): the instant each recent data version is answered as of. */
  private readonly instants = new WeakMap<object, WeakMap<object, Map<string, number>>>();

  constructor(private options: CacheOptions = DEFAULT_CACHE_OPTIONS) {}

  /** Changes the lifetime or size from now on (ttlMs 0: every lookup computes afresh). */
  configure(options: Partial<CacheOptions>): void {
    this.options = { ...this.options, ...options };
  }

  /**
   * The value of `compute` for `key`, reused while the data version is the same and `now` is
   * within ttlMs after the time it was computed for (or within staleMs, while a background
   * recomputation replaces it). Concurrent callers share one computation (single flight), also
   * with ttlMs 0: a computation under way for the same key and data version, for this caller's
   * "now" or an earlier one, is every caller's. A failed one is not kept (every caller sharing it
   * gets its error), and a failed background recomputation drops the entry, so the next request
   * computes and reports the error itself. `observe` is told how the lookup was answered.
   */
  async get<T>(
    scope: { db: Queryable; config: object; now: Date },
    key: string,
    compute: (version: string) => Promise<T>,
    versionOptions: { actions?: boolean } = {},
    observe?: (outcome: CacheOutcome) => void,
  ): Promise<T> {
    const store = this.storeOf(scope.db, scope.config);
    const version = await dataVersionOf(scope, versionOptions);
    const now = scope.now.getTime();
    const hit = store.get(key);
    if (hit && hit.version === version && now >= hit.now) {
      const age = now - hit.now;
      if (!hit.settled) {
        observe?.('shared');
        return hit.value as Promise<T>;
      }
      if (age < this.options.ttlMs) {
        observe?.('fresh');
        return hit.value as Promise<T>;
      }
      if (this.options.ttlMs > 0 && age < this.options.staleMs) {
        if (!hit.refreshing) {
          hit.refreshing = true;
          this.place(store, key, { version, now, value: compute(version) }, hit);
        }
        observe?.('stale');
        return hit.value as Promise<T>;
      }
    }
    observe?.('computed');
    const entry: Entry = { version, now, value: compute(version) };
    this.place(store, key, entry);
    return entry.value as Promise<T>;
  }

  /**
   * The one instant the reports answer as of, at data version `version`: the clock (`scope.now`)
   * when the version was first asked for, kept for ttlMs; then the clock again. Every format of
   * one report (the page, its JSON, its CSV), and every report, computed within that window at
   * that version uses it as its "now", so month to date, the projection and the period's spend
   * are the same figures in all of them, and each says "as of" this instant. With ttlMs 0 (cache
   * off) it is the clock.
   */
  instant(scope: { db: Queryable; config: object; now: Date }, version: string): Date {
    let byConfig = this.instants.get(scope.db);
    if (!byConfig) this.instants.set(scope.db, (byConfig = new WeakMap()));
    let known = byConfig.get(scope.config);
    if (!known) byConfig.set(scope.config, (known = new Map()));
    const now = scope.now.getTime();
    const at = known.get(version);
    if (at !== undefined && now >= at && now - at < this.options.ttlMs) return new Date(at);
    known.delete(version);
    known.set(version, now);
    // A few versions at once (with and without actions); older ones are forgotten.
    while (known.size > 8) known.delete(known.keys().next().value!);
    return new Date(now);
  }

  /**
   * Puts `entry` in place now, or, when it replaces `stale` in the background, once it has
   * succeeded (unless something newer took the key meanwhile).
   */
  private place(store: Map<string, Entry>, key: string, entry: Entry, stale?: Entry): void {
    const put = () => {
      store.delete(key);
      store.set(key, entry);
      while (store.size > this.options.maxEntries) store.delete(store.keys().next().value!);
    };
    if (!stale) put();
    entry.value.then(
      () => {
        entry.settled = true;
        if (stale && store.get(key) === stale) put();
      },
      () => {
        entry.settled = true;
        const current = store.get(key);
        if (current === entry || (stale && current === stale)) store.delete(key);
      },
    );
  }

  private storeOf(db: object, config: object): Map<string, Entry> {
    let byConfig = this.stores.get(db);
    if (!byConfig) this.stores.set(db, (byConfig = new WeakMap()));
    let store = byConfig.get(config);
    if (!store) byConfig.set(config, (store = new Map()));
    return store;
  }
}

/** A stable text of parameters for cache keys: object keys sorted (Dates become ISO text first). */
export function cacheKey(parts: readonly unknown[]): string {
  return JSON.stringify(parts, (_key, value: unknown) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      return Object.fromEntries(Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }
    return value;
  });
}
