/**
 * Every report is defined through defineReport. With `{ cached: true }` the page and the filters
 * are served from the report cache (see cache.ts) while the data is unchanged; only reports over
 * snapshot data alone may ask for it, or with `showsActions` also over stops and scheduled stops.
 * (JIT compilation, which cost report queries 100 ms to seconds, is off for every connection:
 * see db/connection.ts.)
 */
import { cacheKey, ReportCache } from './cache.js';
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
  const cached = <T>(ctx: ReportCtx, parts: readonly unknown[], compute: () => Promise<T>): Promise<T> =>
    options.cached ? reportCache.get(ctx, cacheKey([report.name, ...parts]), compute, { actions: options.showsActions ?? false }) : compute();
  return {
    ...report,
    cached: options.cached ?? false,
    run: (ctx, params, page) => cached(ctx, ['run', params, page], async () => ({ ...(await report.run(ctx, params, page)), computedAt: ctx.now })),
    ...(report.filters
      ? { filters: (ctx: ReportCtx, params: P) => cached(ctx, ['filters', params], () => report.filters!(ctx, params)) }
      : {}),
  };
}
