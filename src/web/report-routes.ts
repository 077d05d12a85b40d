import { Router, type Request, type Response } from 'express';
import type { Column, ReportContext, ReportDefinition, Row } from '../reports/report.js';
import { oneDataVersion } from '../reports/shared/cache.js';
import { isPartial } from '../reports/shared/coverage.js';
import { exportRegionNames, regionIdsOf, regionNames } from '../reports/shared/regions.js';
import type { Queryable } from '../db/connection.js';
import { contentDisposition, csvFilename, streamCsv } from '../present/csv.js';
import { isRegionColumn } from '../present/regions.js';
import { reportMetadataUrl, reportUrls, type RawQuery } from '../present/urls.js';
import { ClientError, isDatabaseUnavailable, notFound } from './errors.js';
import { toJson } from './json.js';
import { SECTIONS } from './layout.js';
import { API_PAGING, HTML_PAGING, parseReportQuery, toRawQuery } from './query.js';
import { customViewTemplate, type RenderKeptPage, type RenderPage } from './render.js';
import { buildReportView } from './report-view.js';
import { describeAccessScope } from '../auth/access-scope.js';
import { scopeOfRequest, visibleReports } from './request-scope.js';

type AnyReport = ReportDefinition<unknown, unknown, unknown>;

export interface ReportRoutesDeps {
  reports: readonly AnyReport[];
  context: () => ReportContext;
  render: RenderPage;
  renderKept: RenderKeptPage;
}

const REPORT_NAME = /^[a-z0-9][a-z0-9_-]*$/;

/** Checks the report list once at start-up: unique URL-safe names, known sections, views present. */
export function indexReports(reports: readonly AnyReport[]): { byName: Map<string, AnyReport>; templates: Map<string, string> } {
  const byName = new Map<string, AnyReport>();
  const templates = new Map<string, string>();
  const sections = new Set(SECTIONS.map((s) => s.section));
  for (const report of reports) {
    if (!REPORT_NAME.test(report.name)) throw new Error(`report name "${report.name}" must be lower-case letters, digits, - or _ (it is a URL slug)`);
    if (byName.has(report.name)) throw new Error(`two reports are named "${report.name}"`);
    if (!sections.has(report.section)) throw new Error(`report "${report.name}" has unknown section "${report.section}"`);
    byName.set(report.name, report);
    templates.set(report.name, report.view ? customViewTemplate(report.view) : 'pages/report');
  }
  return { byName, templates };
}

export function reportRoutes(deps: ReportRoutesDeps): Router {
  const router = Router();
  const { byName, templates } = indexReports(deps.reports);

  const find = (req: Request, res: Response): AnyReport => {
    const name = String(req.params.name);
    const report = byName.get(name);
    if (!report) {
      const where = req.path.startsWith('/api/') ? 'GET /api/reports lists them.' : 'The navigation lists every report.';
      throw notFound(`No report named "${name}". ${where}`);
    }
    res.locals.reportName = report.name;
    const scope = scopeOfRequest(res);
    if (scope && !report.scoped) {
      throw new ClientError(403, 'forbidden', `The report "${report.title}" shows figures of every team; you see only ${describeAccessScope(scope)}.`);
    }
    return report;
  };

  /** Where the navigation starts: the overview (a scoped user's shows their scope's figures), else the first report the user may open. */
  const landing = (res: Response): string | null => {
    const scope = scopeOfRequest(res);
    const visible = visibleReports(deps.reports, scope);
    const first = visible.find((r) => r.name === 'overview') ?? (scope ? visible[0] : undefined);
    return first ? reportUrls(first.name).html : null;
  };

  /** The report context of this request: the user's scope decides what its reports show. */
  const contextOf = (res: Response): ReportContext => oneDataVersion({ ...deps.context(), scope: scopeOfRequest(res) });

  /** A dataset export's metadata headers and a link to its metadata document, on every answer carrying its rows. */
  const setMetadataHeaders = (res: Response, report: AnyReport): void => {
    if (!report.datasetMetadata) return;
    for (const [name, value] of Object.entries(report.datasetMetadata.headers)) res.setHeader(name, value);
    res.setHeader('Link', `<${reportMetadataUrl(report.name)}>; rel="describedby"; type="application/json"`);
  };

  const sendCsv = async (req: Request, res: Response, report: AnyReport, params: unknown, reportQuery: RawQuery, exact: boolean): Promise<void> => {
    // One data version per answer: read once, for the instant and the rows alike.
    const ctx = contextOf(res);
    const exported = await report.export(ctx, params);
    res.status(200);
    res.setHeader('Content-Type', 'text/csv; charset=utf-8');
    const partial = exported.coverage !== undefined && isPartial(exported.coverage);
    // The file's name says the instant its figures are as of: the page's "Figures as of", the JSON's generated_at.
    const asOf = exported.computedAt ?? ctx.now;
    res.setHeader('Content-Disposition', contentDisposition(csvFilename(report.name, reportQuery, asOf, { partial, asOf: true })));
    res.setHeader('X-Figures-As-Of', asOf.toISOString());
    res.setHeader('Cache-Control', 'no-store');
    setMetadataHeaders(res, report);
    if (req.method === 'HEAD') {
      // Headers only: do not run the whole export for nothing (and let the report close its cursor).
      await exported.rows[Symbol.asyncIterator]().return?.();
      res.end();
      return;
    }
    // A failure after the first byte ends the file with a line saying it is incomplete; the error
    // handler then cuts the connection.
    const failureReason = (err: unknown) =>
      isDatabaseUnavailable(err) ? 'the database connection was lost' : `the export failed (request id ${String(res.locals.requestId)})`;
    const names = await exportRegionNames(ctx.db as Queryable, exported.columns, params);
    await streamCsv(res, exported.columns, exported.rows, { exact: exact || exported.exactMoney === true, totals: exported.totals, sql: exported.sql, failureReason, ...(names ? { regionNames: names } : {}) });
  };

  // The reports' own prefix without a name: where the navigation starts.
  router.get('/reports', (_req, res) => res.redirect(302, landing(res) ?? '/'));

  router.get('/', (req, res) => {
    const start = landing(res);
    if (start) return res.redirect(302, start);
    return deps.render(req, res, 'pages/index', { pageTitle: 'Reports', groups: groupsOf(visibleReports(deps.reports, scopeOfRequest(res))) });
  });

  router.get('/api/reports', (_req, res) => {
    res.type('json').send(toJson({ reports: visibleReports(deps.reports, scopeOfRequest(res)).map(indexEntry) }));
  });

  // Before /api/reports/:name, which would otherwise take "x.csv" as a name.
  router.get('/api/reports/:name.csv', async (req, res) => {
    const report = find(req, res);
    const { params, reportQuery, exact } = await parseReportQuery(report, toRawQuery(req.query), 'csv', API_PAGING);
    await sendCsv(req, res, report, params, reportQuery, exact);
  });

  router.get('/api/reports/:name/metadata', (req, res) => {
    const report = find(req, res);
    if (!report.datasetMetadata) throw notFound(`The report "${report.name}" is not a dataset export and has no metadata.`);
    setMetadataHeaders(res, report);
    res.type('json').send(toJson(report.datasetMetadata.document));
  });

  router.get('/api/reports/:name', async (req, res) => {
    const report = find(req, res);
    const { params, ignored, page, format, reportQuery, exact } = await parseReportQuery(report, toRawQuery(req.query), 'json', API_PAGING);
    if (format === 'csv') return sendCsv(req, res, report, params, reportQuery, exact);
    const ctx = contextOf(res);
    const output = await report.run(ctx, params, page);
    // Region columns hold ids; their names beside the rows (the CSV's "Region name" column).
    const { names } = await namesOfRegions(ctx.db as Queryable, output);
    res.setHeader('Cache-Control', 'no-store');
    setMetadataHeaders(res, report);
    res.type('json').send(
      toJson({
        report: report.name,
        params,
        page: { limit: page.limit, offset: page.offset, total: output.totalRows },
        title: output.title,
        summary: output.summary,
        charts: output.charts,
        columns: output.columns,
        rows: output.rows,
        // Per currency over every matching row (not only this page), exact like the rows.
        totals: output.totals ?? [],
        notes: output.notes,
        ...(ignored.length > 0 ? { ignored_parameters: ignored } : {}),
        ...(output.headline ? { headline: output.headline } : {}),
        ...(output.coverage ? { coverage: output.coverage } : {}),
        ...(output.previousCoverage ? { previous_coverage: output.previousCoverage } : {}),
        ...(output.columnCoverage ? { column_coverage: output.columnCoverage } : {}),
        ...(output.columns.some(isRegionColumn) ? { region_names: names ?? {} } : {}),
        ...(report.datasetMetadata ? { metadata_url: reportMetadataUrl(report.name), metadata: report.datasetMetadata.document } : {}),
        // When the figures were computed: a result served from the report cache is older than the request.
        generated_at: (output.computedAt ?? ctx.now).toISOString(),
      }),
    );
  });

  router.get('/reports/:name', async (req, res) => {
    const report = find(req, res);
    const query = toRawQuery(req.query);
    const { params, ignored, page, reportQuery, columns } = await parseReportQuery(report, query, 'html', HTML_PAGING);
    // The page and its filters from one data version, read once.
    const ctx = contextOf(res);
    const [computed, filters] = await Promise.all([report.run(ctx, params, page), report.filters ? report.filters(ctx, params) : Promise.resolve(null)]);
    const output = ignored.length > 0 ? { ...computed, notes: [ignoredNote(ignored), ...computed.notes] } : computed;
    const { names, lookedUp } = await namesOfRegions(ctx.db as Queryable, output);
    const data = () => {
      const view = buildReportView({ report, output, filters, query, reportQuery, page, defaultLimit: HTML_PAGING.defaultLimit, columns, regionNames: names });
      return { ...view, pageTitle: view.title };
    };
    const template = templates.get(report.name)!;
    const options = { currentReport: report.name };
    // A cached result (with its names and filters) is the same object while it is served: the
    // page's body is too, for the same query. Region names looked up here are not part of it.
    if (report.cached && !lookedUp) {
      await deps.renderKept(req, res, { template, owners: [computed, filters], key: JSON.stringify(query), data }, options);
    } else {
      await deps.render(req, res, template, data(), options);
    }
  });

  return router;
}

function ignoredNote(ignored: readonly string[]): string {
  return `Ignored ${ignored.length === 1 ? 'a parameter' : 'parameters'} this report does not use: ${ignored.join(', ')}.`;
}

function indexEntry(report: AnyReport) {
  return { name: report.name, title: report.title, description: report.description, section: report.section, urls: reportUrls(report.name) };
}

function groupsOf(reports: readonly AnyReport[]) {
  return SECTIONS.map(({ section, label }) => ({ label, reports: reports.filter((r) => r.section === section).map(indexEntry) })).filter((g) => g.reports.length > 0);
}

/**
 * Names of the regions in a report's region columns: defineReport found them (cached with the
 * page), or one small lookup here (`lookedUp`: not part of a cached result).
 */
async function namesOfRegions(db: Queryable, output: { columns: Column[]; rows: Row[]; regionNames?: Record<string, string> }): Promise<{ names: Record<string, string> | undefined; lookedUp: boolean }> {
  if (output.regionNames) return { names: output.regionNames, lookedUp: false };
  const ids = regionIdsOf(output.columns, output.rows);
  if (ids.length === 0) return { names: undefined, lookedUp: false };
  return { names: await regionNames(db, ids), lookedUp: true };
}
