/**
 * Every report is defined through defineReport, which gives its queries a database handle that
 * runs each statement with JIT compilation off (on Postgres; PGlite has no JIT). Postgres
 * compiles any plan whose estimated cost passes jit_above_cost (100,000 by default); report plans
 * over 100,000-row snapshots pass it, and compiling them costs 100 ms to seconds while running
 * them takes a few ms. (Setting `jit = off` for the whole pool in connection.ts would make this
 * wrapper unnecessary.)
 *
 * With `{ cached: true }` the page and the filters are served from the report cache (see
 * cache.ts) while the data is unchanged; only reports over snapshot data alone may ask for it,
 * or with `showsActions` also over stops and scheduled stops.
 */
import type { Database, Queryable, Row } from '../../db/connection.js';
import { cacheKey, ReportCache } from './cache.js';
import type { Report, ReportCtx } from './types.js';

function runWithoutJit<T>(db: Database, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query("select set_config('jit', 'off', true)");
    return fn(tx);
  });
}

/** The same database, every query and execute in its own short transaction with JIT off. */
export function withoutJit(db: Database): Database {
  if (db.driver !== 'pg' || (db as { [NO_JIT]?: true })[NO_JIT]) return db;
  return Object.assign(Object.create(null) as object, db, {
    [NO_JIT]: true,
    query: <R extends Row = Row>(text: string, params?: readonly unknown[]) => runWithoutJit(db, (tx) => tx.query<R>(text, params)),
    execute: <R extends Row = Row>(text: string, params?: readonly unknown[]) => runWithoutJit(db, (tx) => tx.execute<R>(text, params)),
  }) as Database;
}

const NO_JIT = Symbol('cloudtally.reports.noJit');

function contextWithoutJit(ctx: ReportCtx): ReportCtx {
  return { ...ctx, db: withoutJit(ctx.db) };
}

/** The results of every cached report in this process. */
export const reportCache = new ReportCache();

export interface DefineOptions {
  /** Serve run and filters from the report cache while the data version is unchanged. */
  cached?: boolean;
  /** The report also shows stops and scheduled stops: they are part of its data version. */
  showsActions?: boolean;
}

export function defineReport<P>(report: Report<P>, options: DefineOptions = {}): Report<P> {
  const cached = <T>(ctx: ReportCtx, parts: readonly unknown[], compute: () => Promise<T>): Promise<T> =>
    options.cached ? reportCache.get(ctx, cacheKey([report.name, ...parts]), compute, { actions: options.showsActions ?? false }) : compute();
  return {
    ...report,
    run: (ctx, params, page) => cached(ctx, ['run', params, page], () => report.run(contextWithoutJit(ctx), params, page)),
    export: (ctx, params) => report.export(contextWithoutJit(ctx), params),
    ...(report.filters
      ? { filters: (ctx: ReportCtx, params: P) => cached(ctx, ['filters', params], () => report.filters!(contextWithoutJit(ctx), params)) }
      : {}),
  };
}
