/**
 * After a collection, computes the landing view of every cached report (its default parameters,
 * the first page as the HTML page and as the JSON API ask for it, and the page's filters), so the
 * first person to open a dashboard after new data arrives is served from the report cache rather
 * than waiting for the computation. One warm-up at a time; asked again during one, it runs once
 * more afterwards (the data may have changed meanwhile).
 */
import type { Logger } from '../logger.js';
import type { ReportContext, ReportDefinition } from '../reports/report.js';
import { API_PAGING, HTML_PAGING, parseReportQuery } from './query.js';

type AnyReport = ReportDefinition<unknown, unknown, unknown>;

export interface ReportWarmer {
  /** Resolves when this warm-up (and any asked for during it) is done; never rejects. */
  warm(): Promise<void>;
  /** No more warm-ups; resolves when the running one has ended. */
  stop(): Promise<void>;
}

export function createReportWarmer(deps: { reports: readonly AnyReport[]; context: () => ReportContext; logger: Logger }): ReportWarmer {
  const log = deps.logger.child({ component: 'report-warmer' });
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;

  const warmReport = async (report: AnyReport, ctx: ReportContext): Promise<void> => {
    const html = await parseReportQuery(report, {}, 'html', HTML_PAGING);
    const json = await parseReportQuery(report, {}, 'json', API_PAGING);
    await Promise.all([report.run(ctx, html.params, html.page), report.filters?.(ctx, html.params)]);
    await report.run(ctx, json.params, json.page);
  };

  const warmAll = async (): Promise<void> => {
    const started = Date.now();
    const ctx = deps.context();
    let warmed = 0;
    for (const report of deps.reports) {
      if (!report.cached || stopped) continue;
      try {
        await warmReport(report, ctx);
        warmed++;
      } catch (error) {
        log.warn({ err: error, report: report.name }, 'warming a report failed: its next request computes it');
      }
    }
    log.debug({ reports: warmed, ms: Date.now() - started }, 'report cache warmed');
  };

  return {
    warm() {
      if (stopped) return Promise.resolve();
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        do {
          again = false;
          await warmAll();
        } while (again && !stopped);
      })().finally(() => {
        running = null;
      });
      return running;
    },
    async stop() {
      stopped = true;
      await running;
    },
  };
}
