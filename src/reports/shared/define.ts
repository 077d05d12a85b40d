/**
 * Every report is defined through defineReport. With `{ cached: true }` the page and the filters
 * are served from the report cache (see cache.ts) while the data is unchanged; only reports over
 * snapshot data alone may ask for it, or with `showsActions` also over stops and scheduled stops.
 * (JIT compilation, which cost report queries 100 ms to seconds, is off for every connection:
 * see db/connection.ts.) With a read replica (ctx.reads), every operation reads the replica once
 * it shows the primary's data version, the primary otherwise (read-routing.ts); a page or filter
 * whose replica read finds the replica unreachable is computed again on the primary.
 */
import { isDatabaseUnavailable } from '../../db/errors.js';
import { cacheKey, dataVersionOf, ReportCache, withNow, type CacheOutcome } from './cache.js';
import { regionIdsOf, regionNames } from './regions.js';
import { scopeCacheKeyPart } from './access-scope.js';
import type { ReportOutput } from '../report.js';
import type { Report, ReportCtx } from './types.js';

/** The results of every cached report in this process. */
export const reportCache = new ReportCache();

export interface DefineOptions {
  /** Serve run and filters from the report cache while the data version is unchanged. */
  cached?: boolean;
  /** The report also shows stops and scheduled stops: they are part of its data version. */
  showsActions?: boolean;
}

export function defineReport<P>(report: Report<P>, options: DefineOptions = {}): Report<P> {
  const versionOptions = { actions: options.showsActions ?? false };
  /** ctx with `db` the database to read: the replica when it is current, else the primary. */
  const reading = async (ctx: ReportCtx, version?: string): Promise<ReportCtx> => {
    if (!ctx.reads) return ctx;
    const current = version ?? (await dataVersionOf(ctx, versionOptions));
    return { ...ctx, db: await ctx.reads.readerAt(ctx.db, current, versionOptions) };
  };
  const computed = async <T>(ctx: ReportCtx, version: string | undefined, compute: (ctx: ReportCtx) => Promise<T>): Promise<T> => {
    ctx.observer?.computed(report.name);
    const at = await reading(ctx, version);
    if (at.db === ctx.db || !ctx.reads) return compute(at);
    try {
      return await compute(at);
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      ctx.reads.unavailable(err);
      return compute(ctx);
    }
  };
  /** A cached report answers as of the one instant of its data version (ReportCache.instant). */
  const atInstant = async (ctx: ReportCtx): Promise<ReportCtx> =>
    options.cached ? withNow(ctx, reportCache.instant(ctx, await dataVersionOf(ctx, versionOptions))) : ctx;
  const cached = async <T>(ctx: ReportCtx, parts: readonly unknown[], compute: (ctx: ReportCtx) => Promise<T>): Promise<T> => {
    if (!options.cached) return computed(ctx, undefined, compute);
    const at = await atInstant(ctx);
    const observe = ctx.observer ? (outcome: CacheOutcome) => ctx.observer!.looked(report.name, outcome) : undefined;
    return reportCache.get(at, cacheKey([report.name, scopeCacheKeyPart(ctx), ...parts]), (version) => computed(at, version, compute), versionOptions, observe);
  };
  return {
    ...report,
    cached: options.cached ?? false,
    run: (ctx, params, page) =>
      cached(ctx, ['run', params, page], async (at) => withRegionNames(at, { ...(await report.run(at, params, page)), computedAt: at.now })),
    export: async (ctx, params) => {
      const at = await atInstant(ctx);
      return { ...(await report.export(await reading(at), params)), computedAt: at.now };
    },
    ...(report.filters
      ? { filters: (ctx: ReportCtx, params: P) => cached(ctx, ['filters', params], (at) => report.filters!(at, params)) }
      : {}),
  };
}

/** The output with the names of the regions its rows show, when it has a region column (cached with it). */
async function withRegionNames(ctx: ReportCtx, output: ReportOutput): Promise<ReportOutput> {
  const ids = regionIdsOf(output.columns, output.rows);
  return ids.length === 0 ? output : { ...output, regionNames: await regionNames(ctx.db, ids) };
}
