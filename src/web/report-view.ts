import { formatNumber, formatTimestamp } from '../present/format.js';
import { reportUrls, urlWith, type RawQuery } from '../present/urls.js';
import type { ChartSpec, Column, FilterField, ReportDefinition, ReportOutput, ReportPage, SummaryItem } from '../reports/report.js';
import { coverageNote, isPartial } from '../reports/shared/coverage.js';
import { isRegionColumn } from '../present/regions.js';
import { TOTAL_LABEL } from '../reports/shared/totals.js';
import { formatCell, formatValue, type CellOptions, type CellView } from './cells.js';
import { chooseColumns, COLS_PARAM, columnsControlView, type ColumnChoice, type ColumnsControlView } from './columns.js';
import { daysOf, headlineView, presetControlView, type HeadlineView, type PresetControlView } from './headline-view.js';
import { jsonForScript } from './json.js';
import { SECTIONS } from './layout.js';

/*
 * The data of a report page, ready for the templates: every URL built here (sort, paging, JSON,
 * CSV with exactly the page's parameters), every value formatted, so templates only lay out.
 */

export interface HeaderView {
  column: Column;
  label: string;
  numeric: boolean;
  /** The one currency of every amount in a money column, shown in its header instead of each cell. */
  currency?: string;
  /** Link that sorts by this column (toggling the direction when it is the current sort). */
  sortHref?: string;
  sorted?: 'asc' | 'desc';
  ariaSort?: 'ascending' | 'descending';
}

export interface ChartView {
  spec: ChartSpec;
  domId: string;
  /** Escaped JSON for a <script type="application/json"> element. */
  json: string;
  /** The same numbers as a table, beside the chart (and instead of it without JavaScript). */
  table: { headers: string[]; rows: Array<{ label: string; values: string[]; href: string | null }> };
  /** The table's element id: the canvas's text alternative (aria-describedby). */
  tableId: string;
  /** Nothing to draw: said instead of an empty plot. */
  empty: boolean;
  /** When the axis shows only every n-th label: says so under the chart. */
  axisNote: string | null;
  /** Many columns: the table goes below the chart rather than beside it. */
  wideTable: boolean;
}

/** Most labels a category axis writes out; beyond it every n-th is shown, and the chart says so. */
export const MAX_AXIS_LABELS = 40;

export interface SummaryView {
  label: string;
  text: string;
  title?: string;
  hint?: string;
  kind: string;
}

export interface FiltersView {
  action: string;
  fields: FilterField[];
  /** Parameters the form does not show but must keep (drill-down filters, sort, limit). */
  hidden: Array<{ name: string; value: string }>;
  /** Choices that start a new view, shown as links (FilterField type `links`). */
  links: Array<{ label: string; options: Array<{ label: string; href: string; current: boolean }> }>;
  resetHref: string;
  /** The period picker, when the report takes a period. */
  period: PeriodPickerView | null;
  /** The filters the request set (with the chosen option's label), for the empty state and the printed page. */
  active: Array<{ label: string; value: string }>;
  /** Every choice of the view in words ("Period: May 2024; Team: gamma"), printed instead of the form. */
  printText: string;
}

/**
 * The period picker: two GET forms to the same page, one writing `period=`, one `from`/`to`
 * (each keeps the other parameters and drops the other form's, so they never conflict).
 */
export interface PeriodPickerView {
  action: string;
  value: string;
  groups: Array<{ label: string; options: Array<{ value: string; label: string }> }>;
  from: string;
  to: string;
  max: string;
  /** The other parameters each form keeps. */
  hidden: Array<{ name: string; value: string }>;
}

export interface PagingView {
  from: number;
  to: number;
  total: number | null;
  limit: number;
  /** The page starts after the last row although rows match. */
  pastEnd?: boolean;
  prevHref?: string;
  nextHref?: string;
}

export interface ReportPageView {
  report: { name: string; title: string; description: string; section: string; sectionLabel: string };
  title: string;
  /** The columns the table shows (the report's default set, or what `cols` asked for). */
  headers: HeaderView[];
  rows: CellView[][];
  /** The "More columns" control (null when the table shows every column and has no others). */
  columnsControl: ColumnsControlView | null;
  /**
   * Per row, its scheduled stop when the table hides that column (`scheduled_stop_at`): shown
   * with the row's action instead, so a due stop is never out of sight. Null when not needed.
   */
  scheduledStops: Array<CellView | null> | null;
  /** Totals per currency over every matching row, for the table's footer. */
  totals: CellView[][];
  summary: SummaryView[];
  charts: ChartView[];
  filters: FiltersView | null;
  paging: PagingView;
  notes: string[];
  /** The coverage note at the top of a report over a period. */
  coverage: { text: string; partial: boolean; short: string } | null;
  /** When the figures were computed, for the page head (cached results are older than the request). */
  computedAt: { iso: string; text: string } | null;
  urls: { self: string; json: string; csv: string; csvExact: string };
  /** The raw output, for custom views that lay things out their own way. */
  output: ReportOutput;
  /** The dashboard's headline cards (report output `headline`). */
  headline: HeadlineView | null;
  /** The period as one compact control (presets and a custom range), for views that show it so. */
  periodControl: PresetControlView | null;
  /** The view folds the layout's status notices into one line (ReportDefinition.foldsNotices). */
  foldsNotices: boolean;
}

const NUMERIC_KINDS = new Set(['int', 'money', 'decimal', 'percent']);

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function headerViews(columns: Column[], path: string, query: RawQuery): HeaderView[] {
  const currentSort = single(query.sort);
  const currentDir = single(query.dir) === 'desc' ? 'desc' : 'asc';
  return columns.map((column) => {
    const view: HeaderView = { column, label: column.label, numeric: NUMERIC_KINDS.has(column.kind) };
    if (!column.sortable) return view;
    const sorted = currentSort === column.key ? currentDir : undefined;
    // First click on a numeric column sorts descending (biggest costs first); text ascending.
    const firstDir = view.numeric ? 'desc' : 'asc';
    const nextDir = sorted ? (sorted === 'asc' ? 'desc' : 'asc') : firstDir;
    const next: RawQuery = { ...query, sort: column.key, dir: nextDir };
    delete next.offset;
    delete next.page;
    view.sortHref = urlWith(path, next);
    if (sorted) {
      view.sorted = sorted;
      view.ariaSort = sorted === 'asc' ? 'ascending' : 'descending';
    }
    return view;
  });
}

function summaryViews(items: SummaryItem[]): SummaryView[] {
  return items.map((item) => {
    const cell = item.value === null ? { text: item.emptyText ?? 'n/a' } : formatValue(item.value, item.kind, item.currency, item.hourly ?? false);
    return { label: item.label, text: cell.text || 'n/a', title: 'title' in cell ? cell.title : undefined, hint: item.hint, kind: item.kind };
  });
}

/** A chart table's number: cents for amounts of 10 or more (3,736.97), up to 4 decimals below (0.0095). */
function chartCellText(value: number): string {
  return formatNumber(value, Math.abs(value) >= 10 ? 2 : 4);
}

/** The step between axis labels (1: every label), the same the chart script applies. */
export function axisStep(spec: ChartSpec): number {
  return spec.type === 'doughnut' || spec.horizontal ? 1 : Math.ceil(spec.labels.length / MAX_AXIS_LABELS);
}

function chartViews(charts: ChartSpec[]): ChartView[] {
  const used = new Set<string>();
  return charts.map((spec, index) => {
    let domId = `chart-${spec.id.replace(/[^A-Za-z0-9_-]/g, '-') || index}`;
    if (used.has(domId)) domId = `${domId}-${index}`;
    used.add(domId);
    const step = axisStep(spec);
    return {
      spec,
      domId,
      json: jsonForScript({ ...spec, axisStep: step }),
      table: {
        headers: spec.datasets.map((d) => d.label),
        rows: spec.labels.map((label, i) => ({
          label,
          // Where the row's label leads: the chart's link for it (a day; a doughnut's slice).
          href: spec.labelHrefs?.[i] ?? (spec.type === 'doughnut' ? spec.hrefs?.[0]?.[i] : null) ?? null,
          values: spec.datasets.map((d) => (d.data[i] === null || d.data[i] === undefined ? '' : chartCellText(d.data[i]!))),
        })),
      },
      tableId: `${domId}-table`,
      // A doughnut of zeros has nothing to draw either.
      empty: spec.labels.length === 0 || spec.datasets.every((d) => d.data.every((v) => v === null || (spec.type === 'doughnut' && v === 0))),
      axisNote: step > 1 ? `The axis names every ${ordinal(step)} of the ${spec.labels.length} points; each one is in the table and in the chart's tooltip.` : null,
      wideTable: spec.datasets.length > 2,
    };
  });
}

function ordinal(n: number): string {
  const suffix = n % 100 >= 11 && n % 100 <= 13 ? 'th' : ({ 1: 'st', 2: 'nd', 3: 'rd' } as Record<number, string>)[n % 10] ?? 'th';
  return `${n}${suffix}`;
}

/** Parameters a period choice replaces (a period's chart replaces the `days` one). */
const PERIOD_PARAMS = new Set(['period', 'from', 'to', 'days', 'offset', 'page']);

function periodPickerView(field: FilterField | undefined, path: string, query: RawQuery): PeriodPickerView | null {
  if (!field) return null;
  const groups: PeriodPickerView['groups'] = [];
  for (const option of field.options ?? []) {
    const label = option.group ?? '';
    let group = groups.find((g) => g.label === label);
    if (!group) groups.push((group = { label, options: [] }));
    group.options.push({ value: option.value, label: option.label });
  }
  const hidden: Array<{ name: string; value: string }> = [];
  for (const [name, value] of Object.entries(query)) {
    if (PERIOD_PARAMS.has(name)) continue;
    for (const v of Array.isArray(value) ? value : [value]) hidden.push({ name, value: v });
  }
  return { action: path, value: field.value ?? '', groups, from: field.range?.from ?? '', to: field.range?.to ?? '', max: field.range?.max ?? '', hidden };
}

function filtersView(fields: FilterField[] | null, path: string, query: RawQuery, page: ReportPage, defaultLimit: number): FiltersView | null {
  if (!fields || fields.length === 0) return null;
  const period = periodPickerView(fields.find((f) => f.type === 'period'), path, query);
  fields = fields.filter((f) => f.type !== 'period');
  const choices = fields.filter((f) => f.type === 'links');
  const links = choices
    .map((f) => ({
      label: f.label,
      // Another view has other columns: only "every column" carries over to it.
      options: (f.options ?? []).map((o) => ({ label: o.label, href: urlWith(path, { [f.name]: o.value, ...(query[COLS_PARAM] === 'all' ? { [COLS_PARAM]: 'all' } : {}) }), current: o.value === (f.value ?? '') })),
    }));
  fields = fields.filter((f) => f.type !== 'links');
  const active = fields
    .filter((f) => (single(query[f.name]) ?? '') !== '' && (f.value ?? '') !== '')
    .map((f) => ({ label: f.label, value: f.options?.find((o) => o.value === f.value)?.label ?? f.value! }));
  // A links choice is not a form field: the form carries its current value as a hidden field.
  const shown = new Set(fields.map((f) => f.name));
  const hidden: Array<{ name: string; value: string }> = [];
  for (const [name, value] of Object.entries(query)) {
    // A new filter starts again at the first page.
    if (shown.has(name) || name === 'offset' || name === 'page' || name === 'limit') continue;
    for (const v of Array.isArray(value) ? value : [value]) hidden.push({ name, value: v });
  }
  if (page.limit !== defaultLimit) hidden.push({ name: 'limit', value: String(page.limit) });
  // Reset clears the filters, not the view the links chose (e.g. the inventory's kind).
  const kept: RawQuery = {};
  for (const f of choices) if (query[f.name] !== undefined) kept[f.name] = query[f.name]!;
  // The column choice is how to look, not what to show: reset keeps it.
  if (query[COLS_PARAM] !== undefined) kept[COLS_PARAM] = query[COLS_PARAM]!;
  const chosen = [
    ...(period ? [{ label: 'Period', value: periodText(period) }] : []),
    ...links.flatMap((l) => l.options.filter((o) => o.current).map((o) => ({ label: l.label, value: o.label }))),
    ...active,
  ];
  const printText = chosen.length > 0 ? chosen.map((c) => `${c.label}: ${c.value}`).join('; ') : 'none (every row)';
  return { action: path, fields, hidden, links, resetHref: urlWith(path, kept), period, active, printText };
}

function periodText(period: PeriodPickerView): string {
  if (period.from) return period.to && period.to !== period.from ? `${period.from} to ${period.to}` : period.from;
  for (const g of period.groups) for (const o of g.options) if (o.value === period.value) return o.label;
  return period.value;
}

function pagingView(path: string, query: RawQuery, page: ReportPage, rowCount: number, total: number | null, defaultLimit: number): PagingView {
  const at = (offset: number): string => {
    const next: RawQuery = { ...query };
    delete next.page;
    delete next.offset;
    delete next.limit;
    if (page.limit !== defaultLimit) next.limit = String(page.limit);
    if (offset > 0) next.offset = String(offset);
    return urlWith(path, next);
  };
  const view: PagingView = { from: rowCount === 0 ? 0 : page.offset + 1, to: rowCount === 0 ? 0 : page.offset + rowCount, total, limit: page.limit };
  // A page past the last row (an edited or old link): "previous" leads to the last page that has rows.
  const pastEnd = rowCount === 0 && page.offset > 0 && (total === null || page.offset >= total);
  if (pastEnd) view.pastEnd = true;
  // Past the end, "previous" goes to the last page with rows (the first one when the total is not known).
  const lastPage = total !== null && total > 0 ? Math.floor((total - 1) / page.limit) * page.limit : 0;
  if (page.offset > 0) view.prevHref = at(pastEnd ? lastPage : Math.max(0, page.offset - page.limit));
  const more = total === null ? rowCount === page.limit : page.offset + rowCount < total;
  if (more) view.nextHref = at(page.offset + page.limit);
  return view;
}

export interface ReportViewInput {
  report: ReportDefinition<unknown, unknown, unknown>;
  output: ReportOutput;
  filters: FilterField[] | null;
  /** The request's query as given (web parameters included). */
  query: RawQuery;
  /** The report's parameters without the web layer's own. */
  reportQuery: RawQuery;
  page: ReportPage;
  defaultLimit: number;
  /** The HTML table's column choice (`cols`); the default set when absent. */
  columns?: ColumnChoice;
  /** Names of the regions the rows show, by region id (see reports/shared/regions.ts). */
  regionNames?: Record<string, string>;
}

/** Per money column: its one currency over these rows (page and totals), or undefined when they mix or have none. */
function singleCurrency(column: Column, rows: readonly Record<string, unknown>[]): string | undefined {
  if (column.kind !== 'money' || !column.currencyKey) return undefined;
  const seen = new Set<string>();
  for (const row of rows) {
    const c = row[column.currencyKey];
    if (typeof c === 'string' && c !== '') seen.add(c);
  }
  return seen.size === 1 ? [...seen][0] : undefined;
}

const SCHEDULED_STOP = 'scheduled_stop_at';

function scheduledStopsOf(output: ReportOutput, shown: ReadonlySet<string>): Array<CellView | null> | null {
  const column = output.columns.find((c) => c.key === SCHEDULED_STOP);
  if (!column || shown.has(SCHEDULED_STOP) || !output.rows.some((r) => r[SCHEDULED_STOP])) return null;
  return output.rows.map((row) => (row[SCHEDULED_STOP] ? formatCell(row, column) : null));
}

export function buildReportView(input: ReportViewInput): ReportPageView {
  const { report, output, query, reportQuery, page, defaultLimit } = input;
  const urls = reportUrls(report.name);
  const pageQuery: RawQuery = { ...reportQuery, limit: String(page.limit), offset: String(page.offset) };
  const choice = input.columns ?? { mode: 'default' };
  const { visible, unknown } = chooseColumns(output.columns, choice);
  const shownKeys = new Set(visible.map((c) => c.key));
  const allRows = [...output.rows, ...(output.totals ?? [])];
  // Money in the header's currency when the table has one; with several, each amount keeps its
  // code unless the table shows the currency column beside it.
  const currencies = new Map(visible.map((c) => [c.key, singleCurrency(c, allRows)] as const));
  const optionsFor = (column: Column): CellOptions => ({
    showCurrency: currencies.get(column.key) === undefined && !(column.currencyKey !== undefined && shownKeys.has(column.currencyKey)),
    regionNames: input.regionNames,
  });
  const headers = headerViews(visible, urls.html, query).map((h) => {
    // A region column with names reads as text (left), like its cells.
    if (isRegionColumn(h.column) && input.regionNames && Object.keys(input.regionNames).length > 0) h = { ...h, numeric: false };
    const currency = currencies.get(h.column.key);
    return currency ? { ...h, currency, label: `${h.label} (${currency})` } : h;
  });
  const filters = filtersView(input.filters, urls.html, query, page, defaultLimit);
  const notes = unknown.length > 0 ? [`Columns not in this table, ignored: ${unknown.join(', ')}.`, ...output.notes] : output.notes;
  return {
    report: {
      name: report.name,
      title: report.title,
      description: report.description,
      section: report.section,
      sectionLabel: SECTIONS.find((s) => s.section === report.section)?.label ?? report.section,
    },
    title: output.title,
    headers,
    rows: output.rows.map((row) => visible.map((column) => formatCell(row, column, optionsFor(column)))),
    columnsControl: columnsControlView(urls.html, query, output.columns, choice, visible),
    scheduledStops: scheduledStopsOf(output, shownKeys),
    // A column the totals leave out (not summable, e.g. a unit price) is blank, not "n/a".
    totals: (output.totals ?? []).map((row) => {
      const cells = visible.map((column) => (row[column.key] === undefined ? { text: '', className: 'empty' } : formatCell(row, column, optionsFor(column))));
      // The column that says "Total" may be hidden (or not first): the first cell says it then.
      const labelShown = visible.some((column) => row[column.key] === TOTAL_LABEL);
      return !labelShown && cells[0] && cells[0].text === '' ? [{ text: TOTAL_LABEL, className: 'text' }, ...cells.slice(1)] : cells;
    }),
    summary: summaryViews(output.summary),
    charts: chartViews(output.charts),
    filters,
    headline: output.headline ? headlineView(output.headline) : null,
    periodControl: presetControlView(filters?.period ?? null),
    foldsNotices: report.foldsNotices === true,
    paging: pagingView(urls.html, query, page, output.rows.length, output.totalRows, defaultLimit),
    notes,
    coverage: output.coverage ? { text: coverageNote(output.coverage), partial: isPartial(output.coverage), short: `Coverage: ${daysOf(output.coverage)}` } : null,
    computedAt: output.computedAt ? { iso: output.computedAt.toISOString(), text: formatTimestamp(output.computedAt) } : null,
    urls: {
      self: urlWith(urls.html, query),
      // The JSON of exactly this page (its own default page size differs, so it is explicit)...
      json: urlWith(urls.json, pageQuery),
      // ...and the CSV of every row behind it.
      csv: urlWith(urls.csv, reportQuery),
      // The same with money unrounded (exact decimals), for those who round in their own sheet.
      csvExact: urlWith(urls.csv, { ...reportQuery, exact: '1' }),
    },
    output,
  };
}
