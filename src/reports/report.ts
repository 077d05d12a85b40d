import type { z } from 'zod';
import type { ColumnKind, PresentedColumn, Row } from '../present/column.js';
import type { ExportSql } from '../present/csv-sql.js';
import type { AccessScope } from '../auth/access-scope.js';

export type { ColumnKind, Row } from '../present/column.js';
export type { ExportSql } from '../present/csv-sql.js';
export type { Diff, FieldChange, TagChange } from '../present/diff.js';

/**
 * The contract between report queries (src/reports) and the web (src/web): a report is defined
 * once, and the same definition answers the HTML page, the JSON API and the CSV export with the
 * same parameters, so an export always reproduces the page it came from. The kinds of value a
 * cell holds, and the rest of what presentation reads of a column, are src/present's vocabulary.
 */

export interface Column extends PresentedColumn {
  /** The row field that holds a link for this cell (drill-down), relative to the app root. */
  hrefKey?: string;
  /** Whether the report accepts `sort=<key>` for this column. */
  sortable?: boolean;
  /**
   * Left out of the HTML table unless asked for (the page's "More columns": `cols=all` or
   * `cols=<key>,...`), so the default column set fits a 1440 px screen. JSON and CSV always carry
   * every column.
   */
  secondary?: boolean;
  /**
   * The column that names the row, when it is not the first (FOCUS keeps the specification's
   * order): the HTML table shows it first, always, and keeps it in view when scrolling sideways.
   */
  identifies?: boolean;
  /**
   * What the HTML shows in an empty cell of this column instead of "n/a": "no data" where the
   * period or month the column is about has no covered hours (its spend is unknown, not 0).
   */
  emptyText?: string;
  /** Text read in full (an idle candidate's reasons): the HTML cell wraps it instead of cutting it. */
  wraps?: boolean;
}

export interface SummaryItem {
  label: string;
  /** Money and decimals as exact text; counts as numbers; null shows as "n/a". */
  value: string | number | null;
  kind: ColumnKind;
  currency?: string;
  /** For money: an hourly amount (see Column.hourly). */
  hourly?: boolean;
  hint?: string;
  /** What the HTML shows for a null value instead of "n/a" (see Column.emptyText). */
  emptyText?: string;
}

export interface ChartSpec {
  id: string;
  title: string;
  type: 'line' | 'bar' | 'doughnut';
  labels: string[];
  datasets: Array<{ label: string; data: Array<number | null> }>;
  stacked?: boolean;
  /** Bars drawn across, one row per label (long labels, many of them): every label stays readable. */
  horizontal?: boolean;
  /** Axis title for the values, e.g. "EUR per hour". */
  valueLabel?: string;
  /**
   * For charts of money: the one currency of every value (a chart never mixes currencies: one
   * chart per currency, its title naming it).
   */
  currency?: string;
  /**
   * Where a click on a bar or slice leads, by dataset then label (null: nowhere), e.g. the cost
   * report of that day and group; `labelHrefs` where each label leads (the table's row headers,
   * and a click on the axis's column outside a bar). Without `hrefs`, a bar leads where its
   * label does.
   */
  hrefs?: Array<Array<string | null>>;
  labelHrefs?: string[];
}

/**
 * The answer at the top of a dashboard, per currency: spend in the period and where it is going
 * (the change against the previous comparable period, or why none is given), the run-rate, the
 * month's projection with the coverage it rests on, and a sparkline of the last covered days.
 */
export interface Headline {
  /** The UTC day of the first snapshot ever collected (the daily chart starts there); null before any. */
  first_covered_day: string | null;
  period: { label: string; from: string; to: string; previous: { from: string; to: string } };
  kpis: HeadlineKpi[];
}

export interface HeadlineKpi {
  currency: string;
  /** Spend in the period, exact; null when no hour of it is covered (unknown, not 0). */
  spend: string | null;
  /** Spend in the previous comparable period (same length, right before); null when unknown. */
  previous_spend: string | null;
  /** Change in percent against the previous period; null when it would not be honest (see change_reason). */
  change_percent: number | null;
  /** Why no change is given (a period not fully collected, no previous spend); null when it is given. */
  change_reason: string | null;
  /** The current run-rate (null: no resource of this currency runs now). */
  price_per_hour: string | null;
  price_per_month: string | null;
  /** The month the projection is of (YYYY-MM). */
  month: string;
  /** Month to date + the current run-rate until month end; null when no hour of the month is covered. */
  projected_month: string | null;
  /** The hours of the month so far that snapshots cover: what the projection rests on. */
  projection_coverage: { covered_hours: number; period_hours: number };
  /** Cost per day of the covered complete days among the last 30 (before today), oldest first; chart numbers. */
  sparkline: Array<{ day: string; cost: number }>;
}

export interface ReportPage {
  limit: number;
  offset: number;
}

export interface ReportOutput {
  /** Title including what the parameters chose, e.g. "Cost by tag: team". */
  title: string;
  summary: SummaryItem[];
  charts: ChartSpec[];
  columns: Column[];
  /** One page of rows (HTML, JSON). */
  rows: Row[];
  /** All rows matching the parameters, for paging; null when not known cheaply. */
  totalRows: number | null;
  /** Caveats shown with the report: coverage (unpriced resources), data age, demo data, partial scopes. */
  notes: string[];
  /** The "now" these figures were computed for; a cached result keeps its own (set by defineReport). */
  computedAt?: Date;
  /**
   * Totals over every row matching the parameters (not only this page): one row per currency,
   * with the same keys as `columns`, money summed in SQL from exact values; the first text column
   * holds "Total". Shown as the table's footer, `totals` in JSON, rows at the end of the CSV.
   */
  totals?: Row[];
  /** For reports over a period: which hours of it the snapshots cover. */
  coverage?: Coverage;
  /** For reports compared with the period before: which hours of that one the snapshots cover. */
  previousCoverage?: Coverage;
  /** For reports with a column per period (months): each such column's coverage, by column key. */
  columnCoverage?: Record<string, Coverage>;
  /**
   * Names of the regions in the rows' region columns, by region id (as text): see
   * reports/shared/regions.ts. Set by defineReport, so a cached page keeps them; the web looks
   * them up for reports defined without it.
   */
  regionNames?: Record<string, string>;
  /** A dashboard's answer above the fold (the overview): `headline` in JSON too. */
  headline?: Headline;
}

/** What a report over a period knows: the period and the hours of it that snapshots cover. */
export interface Coverage {
  /** Start of the period, ISO 8601 UTC (inclusive). */
  from: string;
  /** End of the period, ISO 8601 UTC (exclusive). */
  to: string;
  covered_hours: number;
  period_hours: number;
  /** The first snapshot ever collected, ISO 8601 UTC; null when there is none. */
  first_snapshot_at: string | null;
}

export interface ReportExport {
  columns: Column[];
  /** Every row matching the parameters, produced in constant memory (cursor / keyset pages). */
  rows: AsyncIterable<Row>;
  /** Totals per currency as in ReportOutput.totals, written after the rows. */
  totals?: () => Promise<Row[]>;
  /**
   * A file for tools rather than people (FOCUS): money stays exact in CSV whatever `exact` says,
   * since the tool sums the rows, and rounded rows would not add up to the period's cost.
   */
  exactMoney?: boolean;
  /** The "now" these rows were computed for (set by defineReport): the CSV file name says it. */
  computedAt?: Date;
  /** As in ReportOutput.coverage; a period not fully covered marks the CSV file name `-partial`. */
  coverage?: Coverage;
  /** As in ReportOutput.previousCoverage (the CSV marks it in the columns' labels). */
  previousCoverage?: Coverage;
  /**
   * The same rows as one SQL query, when the database the export reads can write CSV itself
   * (Postgres: `COPY ... TO STDOUT`): the web then has the database write the file and only passes
   * the bytes on. `query(select)` is the query whose select list `select` gives from the SQL of
   * each row field (by column key), in the rows' order.
   */
  sql?: ExportSql;
}

/**
 * What describes a dataset export (FOCUS) apart from its rows, so that a tool can read it without
 * them: served at /api/reports/<name>/metadata, named in headers on every answer carrying the
 * rows, and sent beside the file of a scheduled delivery.
 */
export interface DatasetMetadata {
  /** Headers on the CSV and JSON answers and on the metadata's own answer (e.g. the format's version and schema id). */
  headers: Readonly<Record<string, string>>;
  /** The metadata document (JSON). */
  document: Readonly<Record<string, unknown>>;
}

/** What a report may read. Reports read the database only (never the cloud API). */
export interface ReportContext<Db = unknown, Cfg = unknown> {
  /** The primary: the data version is read here, and every read unless `reads` routes it. */
  db: Db;
  config: Cfg;
  now: Date;
  /** Sends reads to a read replica once it shows the primary's data version (reports/shared/read-routing.ts). */
  reads?: ReadRouter<Db>;
  /** Told of every computation of a report and how each cached lookup was answered (the metrics). */
  observer?: ReportObserver;
  /**
   * What the requesting user may see (team-scoped access): only resources whose tag matches.
   * null or absent: everything (an unscoped user, a service-wide computation). Optional so that
   * service-wide callers (warming, alerts, tests of unscoped figures) need not say it.
   */
  scope?: AccessScope | null;
}

/** How a report cache lookup was answered (reports/shared/cache.ts). */
export type ReportCacheOutcome = 'fresh' | 'shared' | 'stale' | 'computed';

export interface ReportObserver {
  /** A report's page or filters were computed (a query ran: not served from the report cache). */
  computed(report: string): void;
  /** A cached report was looked up in the report cache. */
  looked(report: string, outcome: ReportCacheOutcome): void;
}

/** Chooses the database a report reads from, given the data version read on the primary. */
export interface ReadRouter<Db> {
  readerAt(primary: Db, version: string, options?: { actions?: boolean }): Promise<Db>;
  /** A read on the replica found it unreachable: read the primary until it answers again. */
  unavailable(err: unknown): void;
}

/** A filter or grouping control shown above a report; its `name` is the query parameter it sets. */
export interface FilterField {
  name: string;
  label: string;
  /**
   * `links`: a choice that starts a new view (e.g. the inventory's kind, whose other filters do
   * not all apply to every kind): one link per option with only that parameter, outside the form.
   */
  type: 'select' | 'text' | 'date' | 'number' | 'links' | 'period';
  /** `group` puts an option in an <optgroup> of that label. */
  options?: Array<{ value: string; label: string; group?: string }>;
  /** The current value, from the parsed parameters. */
  value?: string;
  /**
   * `period`: the period picker (reports/shared/period.ts). `options` are the `period=` values;
   * `range` the custom range's `from`/`to` days (empty when not chosen) and the latest day allowed.
   */
  range?: { from: string; to: string; max: string };
}

export interface ReportDefinition<P = unknown, Db = unknown, Cfg = unknown> {
  /** URL slug: /reports/<name>, /api/reports/<name>, /api/reports/<name>.csv */
  name: string;
  title: string;
  description: string;
  /** Navigation group. */
  section: 'cost' | 'inventory' | 'operations' | 'health';
  /**
   * Parses the query string (values are strings, or string arrays when repeated) into typed
   * parameters; page/limit/offset/format are handled by the web layer and not passed here.
   * A failure is a 400 naming each bad parameter.
   */
  params: z.ZodType<P>;
  run(ctx: ReportContext<Db, Cfg>, params: P, page: ReportPage): Promise<ReportOutput>;
  export(ctx: ReportContext<Db, Cfg>, params: P): Promise<ReportExport>;
  /** The controls for this report's parameters (select options may come from the data). */
  filters?(ctx: ReportContext<Db, Cfg>, params: P): Promise<FilterField[]>;
  /** A template in views/reports/ to use instead of the generic report page. */
  view?: string;
  /**
   * The view shows the layout's status notices itself, folded into one line that expands (the
   * layout then shows only error banners above it).
   */
  foldsNotices?: boolean;
  /** Results come from the report cache while the data is unchanged (reports/shared/cache.ts). */
  cached?: boolean;
  /** For a dataset export: its metadata, the same for every answer (see DatasetMetadata). */
  datasetMetadata?: DatasetMetadata;
  /**
   * Whether the report answers a team-scoped user (ctx.scope) with only the scope's resources.
   * A report without it is refused to scoped users (403) rather than show figures of everyone.
   */
  scoped?: boolean;
}
