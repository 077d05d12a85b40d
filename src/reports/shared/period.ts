/**
 * The one period parser of the cost reports: `period=` (YYYY-MM, YYYY-Qn, YYYY, mtd, last-month,
 * qtd, ytd) or `from`/`to` (inclusive UTC days, or months YYYY-MM), resolved against the report's
 * "now". Static checks (shape, calendar, order, length) live in the zod schema, so they answer 400
 * with every other parameter problem; what needs "now" (a period that has not begun) is checked
 * when the report runs.
 */
import { z } from 'zod';
import type { FilterField } from '../report.js';
import { addDays, isoDay } from './format.js';
import { EARLIEST_DATE, invalidParameter, LATEST_DATE } from './params.js';

const PERIOD_HELP = 'YYYY-MM, YYYY-Qn, YYYY, mtd, last-month, last-7-days, last-30-days, qtd, last-quarter or ytd';

/**
 * The presets of the compact period control, in its order: each is a `period=` value (a custom
 * range is `period=custom` with from/to).
 */
export const PERIOD_PRESETS: ReadonlyArray<{ value: string; label: string }> = [
  { value: 'mtd', label: 'This month' },
  { value: 'last-month', label: 'Last month' },
  { value: 'last-7-days', label: 'Last 7 days' },
  { value: 'last-30-days', label: 'Last 30 days' },
  { value: 'qtd', label: 'This quarter' },
  { value: 'last-quarter', label: 'Last quarter' },
  { value: 'ytd', label: 'Year to date' },
];
const NAMED: readonly string[] = PERIOD_PRESETS.map((p) => p.value);
const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;
const QUARTER = /^(\d{4})-Q([1-4])$/;
const YEAR = /^(\d{4})$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
/** The longest custom range. */
export const MAX_PERIOD_YEARS = 3;

function realDay(s: string): boolean {
  const d = new Date(`${s}T00:00:00Z`);
  return DAY.test(s) && !Number.isNaN(d.getTime()) && isoDay(d) === s;
}

/**
 * The years a period may name: those of the dates every report accepts (see EARLIEST_DATE in
 * params.ts), so a period, its previous period and their days stay years Postgres and JavaScript
 * both hold (Postgres has no year 0000).
 */
const EARLIEST_YEAR = EARLIEST_DATE.slice(0, 4);
const LATEST_YEAR = LATEST_DATE.slice(0, 4);
const DATE_RANGE_HELP = `from ${EARLIEST_DATE} to ${LATEST_DATE} (or a month from ${EARLIEST_DATE.slice(0, 7)} to ${LATEST_DATE.slice(0, 7)})`;

/** A day or a month (YYYY-MM) within EARLIEST_DATE..LATEST_DATE. */
function withinDateBounds(s: string): boolean {
  return s.length === 7 ? s >= EARLIEST_DATE.slice(0, 7) && s <= LATEST_DATE.slice(0, 7) : s >= EARLIEST_DATE && s <= LATEST_DATE;
}

/** A day YYYY-MM-DD, or a month YYYY-MM (its first day as `from`, its last as `to`). */
const dayOrMonth = (name: 'from' | 'to') =>
  z
    .string()
    .max(10, { error: `${name} must be a date YYYY-MM-DD or a month YYYY-MM`, abort: true })
    .regex(/^\d{4}-\d{2}(-\d{2})?$/, { error: `${name} must be a date YYYY-MM-DD or a month YYYY-MM`, abort: true })
    .refine((s) => (s.length === 7 ? MONTH.test(s) : realDay(s)), { error: `${name} must be a real calendar date YYYY-MM-DD (or a month YYYY-MM)`, abort: true })
    .refine(withinDateBounds, { error: `${name} must be a date ${DATE_RANGE_HELP}` })
    .optional();

/** The period parameters, to spread into a report's z.strictObject({...}). */
export const periodParamShape = {
  period: z
    .string()
    .max(12, { error: `period must be one of ${PERIOD_HELP}`, abort: true })
    .refine((s) => NAMED.includes(s) || s === 'custom' || MONTH.test(s) || QUARTER.test(s) || YEAR.test(s), {
      error: `period must be one of ${PERIOD_HELP} (or from=YYYY-MM-DD&to=YYYY-MM-DD)`,
      abort: true,
    })
    .refine((s) => !/^\d{4}/.test(s) || (s.slice(0, 4) >= EARLIEST_YEAR && s.slice(0, 4) <= LATEST_YEAR), {
      error: `period must name a year from ${EARLIEST_YEAR} to ${LATEST_YEAR}`,
    })
    .optional(),
  from: dayOrMonth('from'),
  to: dayOrMonth('to'),
};

export interface PeriodParams {
  period?: string;
  from?: string;
  to?: string;
}

/** First day of a `from` value; last day of a `to` value (months expand to their whole month). */
function fromDayOf(s: string): string {
  return s.length === 7 ? `${s}-01` : s;
}
function toDayOf(s: string): string {
  return s.length === 7 ? lastDayOf(`${s}-01`, 1) : s;
}

/** For a schema's superRefine: period and from/to are not mixed (period=custom uses from/to). */
export function checkPeriodParams(p: PeriodParams, ctx: z.RefinementCtx): void {
  if (p.period !== undefined && p.period !== 'custom' && (p.from !== undefined || p.to !== undefined)) {
    ctx.addIssue({ code: 'custom', path: ['period'], message: 'give either period or from/to, not both (period=custom uses from/to)' });
  }
}

/** A range's order and length (answered like a schema error: 400 naming `to`). */
function checkRange(range: DayRange): void {
  if (range.fromDay > range.toDay) throw invalidParameter('from', `from (${range.fromDay}) must not be after to (${range.toDay})`);
  // Compared as instants: years after 9999 are no four-digit day strings (9999-12-31 + 3 years).
  if (Date.parse(`${range.toDay}T00:00:00Z`) >= yearsLater(range.fromDay, MAX_PERIOD_YEARS)) throw invalidParameter('to', `a period spans at most ${MAX_PERIOD_YEARS} years (from ${range.fromDay} to ${range.toDay} is longer)`);
}

export function addMonths(day: string, months: number): string {
  const [y, m] = day.split('-').map(Number) as [number, number];
  return isoDay(new Date(Date.UTC(y, m - 1 + months, 1)));
}

/** The last day of a month YYYY-MM. */
export function lastDayOfMonth(month: string): string {
  return lastDayOf(`${month}-01`, 1);
}

/** The last day of the `months` months starting at `start` (a first of a month); 9999-12 ends 9999-12-31, not in year 10000. */
function lastDayOf(start: string, months: number): string {
  const [y, m] = start.split('-').map(Number) as [number, number];
  return isoDay(new Date(Date.UTC(y, m - 1 + months, 0)));
}

/** 00:00 UTC of the same day `years` later (as epoch milliseconds). */
function yearsLater(day: string, years: number): number {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const date = Date.UTC(y + years, m - 1, d);
  // 29 Feb + 1 year = 28 Feb, not 1 March.
  return new Date(date).getUTCDate() === d ? date : Date.UTC(y + years, m, 0);
}

export interface DayRange {
  /** First day (inclusive, UTC). */
  fromDay: string;
  /** Last day (inclusive, UTC). */
  toDay: string;
}

export interface ResolvedPeriod extends DayRange {
  /** What was asked, for titles: "2025-02", "2025-Q1", "month to date (2025-03)", "2025-02-03 to 2025-02-10". */
  label: string;
  /** Start of the period (00:00 UTC of fromDay). */
  start: Date;
  /** End of what is known: the period's end (00:00 UTC after toDay) or now, whichever is earlier. */
  end: Date;
  /** The last day with figures: toDay, or today when the period reaches past now. */
  lastDay: string;
  /** The period compared with (see docs/finance-periods.md). */
  previous: DayRange;
}

const quarterStart = (day: string) => `${day.slice(0, 4)}-${String(Math.floor((Number(day.slice(5, 7)) - 1) / 3) * 3 + 1).padStart(2, '0')}-01`;
const daysIn = (r: DayRange) => Math.round((Date.parse(`${r.toDay}T00:00:00Z`) - Date.parse(`${r.fromDay}T00:00:00Z`)) / 86_400_000) + 1;

/** `length` days from `start`, at most until the day before `limit`. */
function sameDays(start: string, length: number, limit: string): DayRange {
  const toDay = addDays(start, length - 1);
  return { fromDay: start, toDay: toDay < limit ? toDay : addDays(limit, -1) };
}

interface Shape {
  label: string;
  range: DayRange;
  previous: DayRange;
}

/** A calendar unit starting at `start` and `months` long; compared with the unit before it. */
function calendarUnit(label: string, start: string, months: number): Shape {
  const previousStart = addMonths(start, -months);
  return {
    label,
    range: { fromDay: start, toDay: lastDayOf(start, months) },
    previous: { fromDay: previousStart, toDay: addDays(start, -1) },
  };
}

/** A unit so far (mtd, qtd, ytd): compared with as many days from the start of the unit before. */
function toDate(label: string, start: string, months: number, today: string): Shape {
  const range = { fromDay: start, toDay: today };
  return { label, range, previous: sameDays(addMonths(start, -months), daysIn(range), start) };
}

/**
 * The last `n` complete days (yesterday and the n-1 before it: today is not over, so a change
 * against the n days before compares like with like), compared with the n days before them.
 */
function lastDays(n: number, today: string): Shape {
  const range = { fromDay: addDays(today, -n), toDay: addDays(today, -1) };
  return { label: `last ${n} days (${range.fromDay} to ${range.toDay})`, range, previous: { fromDay: addDays(range.fromDay, -n), toDay: addDays(range.fromDay, -1) } };
}

export type DefaultPeriod = 'mtd' | { lastMonths: number };

function shapeOf(p: PeriodParams, today: string, fallback: DefaultPeriod): Shape {
  const period = p.period === 'custom' ? undefined : p.period;
  const month = `${today.slice(0, 7)}-01`;
  if (period === undefined && p.from === undefined && p.to === undefined) {
    if (fallback === 'mtd') return toDate(`month to date (${today.slice(0, 7)})`, month, 1, today);
    const start = addMonths(month, -(fallback.lastMonths - 1));
    const range = { fromDay: start, toDay: today };
    return { label: `${start.slice(0, 7)} to ${today.slice(0, 7)}`, range, previous: { fromDay: addMonths(start, -fallback.lastMonths), toDay: addDays(start, -1) } };
  }
  if (period === undefined) {
    // from alone runs to today; to alone starts on the first of its month.
    const toDay = p.to !== undefined ? toDayOf(p.to) : p.from !== undefined && fromDayOf(p.from) > today ? fromDayOf(p.from) : today;
    const fromDay = p.from !== undefined ? fromDayOf(p.from) : `${toDay.slice(0, 7)}-01`;
    const range = { fromDay, toDay };
    const n = daysIn(range);
    return { label: `${fromDay} to ${toDay}`, range, previous: { fromDay: addDays(fromDay, -n), toDay: addDays(fromDay, -1) } };
  }
  if (period === 'mtd') return toDate(`month to date (${today.slice(0, 7)})`, month, 1, today);
  if (period === 'qtd') return toDate(`quarter to date (${today.slice(0, 4)}-Q${Math.floor((Number(today.slice(5, 7)) - 1) / 3) + 1})`, quarterStart(today), 3, today);
  if (period === 'ytd') return toDate(`year to date (${today.slice(0, 4)})`, `${today.slice(0, 4)}-01-01`, 12, today);
  if (period === 'last-month') {
    const start = addMonths(month, -1);
    return calendarUnit(start.slice(0, 7), start, 1);
  }
  if (period === 'last-7-days' || period === 'last-30-days') return lastDays(period === 'last-7-days' ? 7 : 30, today);
  if (period === 'last-quarter') {
    const start = addMonths(quarterStart(today), -3);
    return calendarUnit(`${start.slice(0, 4)}-Q${(Number(start.slice(5, 7)) - 1) / 3 + 1}`, start, 3);
  }
  if (MONTH.test(period)) return calendarUnit(period, `${period}-01`, 1);
  const quarter = QUARTER.exec(period);
  if (quarter) return calendarUnit(period, `${quarter[1]}-${String((Number(quarter[2]) - 1) * 3 + 1).padStart(2, '0')}-01`, 3);
  return calendarUnit(period, `${period}-01-01`, 12);
}

/**
 * The period the parameters ask for, seen from `now`. A period that has not begun answers 400
 * naming the parameter; one that reaches past now ends now (nothing is known beyond it).
 */
export function resolvePeriod(p: PeriodParams, now: Date, fallback: DefaultPeriod = 'mtd'): ResolvedPeriod {
  const today = isoDay(now);
  const { label, range, previous } = shapeOf(p, today, fallback);
  checkRange(range);
  if (range.fromDay > today) {
    if (p.period !== undefined && p.period !== 'custom') throw invalidParameter('period', `period ${p.period} starts ${range.fromDay}, after today (${today}): there are no figures for it yet`);
    if (p.from === undefined) throw invalidParameter('to', `to (${p.to}) reaches no day up to today (${today}): the period would start ${range.fromDay}`);
    throw invalidParameter('from', `from (${range.fromDay}) must not be after today (${today})`);
  }
  const periodEnd = new Date(Date.parse(`${range.toDay}T00:00:00Z`) + 86_400_000);
  return {
    ...range,
    label,
    start: new Date(`${range.fromDay}T00:00:00Z`),
    end: periodEnd.getTime() < now.getTime() ? periodEnd : now,
    lastDay: range.toDay < today ? range.toDay : today,
    previous,
  };
}

/** Whether the query named a period (otherwise the report's default applies). */
export function periodGiven(p: PeriodParams): boolean {
  return p.period !== undefined || p.from !== undefined || p.to !== undefined;
}

/** The calendar months (YYYY-MM) a day range touches, in order. */
export function monthsOf(range: DayRange): string[] {
  const months: string[] = [];
  for (let m = `${range.fromDay.slice(0, 7)}-01`; m <= range.toDay; m = addMonths(m, 1)) months.push(m.slice(0, 7));
  return months;
}

/**
 * The period picker's field: a select of relative periods, the last 36 months, 12 quarters and 4
 * years (all as `period=`), plus a custom range (`from`/`to`). The web renders it as two GET
 * forms (see views/partials/period-picker.eta), so it works without JavaScript.
 */
export function periodField(p: PeriodParams, now: Date, defaultLabel = 'Month to date'): FilterField {
  const today = isoDay(now);
  const month = `${today.slice(0, 7)}-01`;
  const options: NonNullable<FilterField['options']> = [
    { value: '', label: `${defaultLabel} (default)`, group: 'Relative' },
    { value: 'mtd', label: 'Month to date', group: 'Relative' },
    { value: 'last-month', label: 'Last month', group: 'Relative' },
    { value: 'last-7-days', label: 'Last 7 days', group: 'Relative' },
    { value: 'last-30-days', label: 'Last 30 days', group: 'Relative' },
    { value: 'qtd', label: 'Quarter to date', group: 'Relative' },
    { value: 'last-quarter', label: 'Last quarter', group: 'Relative' },
    { value: 'ytd', label: 'Year to date', group: 'Relative' },
  ];
  for (let i = 0; i < 36; i++) options.push({ value: addMonths(month, -i).slice(0, 7), label: addMonths(month, -i).slice(0, 7), group: 'Months' });
  const quarter = quarterStart(today);
  for (let i = 0; i < 12; i++) {
    const q = addMonths(quarter, -3 * i);
    options.push({ value: `${q.slice(0, 4)}-Q${(Number(q.slice(5, 7)) - 1) / 3 + 1}`, label: `${q.slice(0, 4)}-Q${(Number(q.slice(5, 7)) - 1) / 3 + 1}`, group: 'Quarters' });
  }
  for (let i = 0; i < 4; i++) options.push({ value: String(Number(today.slice(0, 4)) - i), label: String(Number(today.slice(0, 4)) - i), group: 'Years' });
  const custom = p.period === undefined || p.period === 'custom' ? p.from !== undefined || p.to !== undefined : false;
  const value = custom ? 'custom' : (p.period ?? '');
  if (p.period !== undefined && !options.some((o) => o.value === p.period) && p.period !== 'custom') options.push({ value: p.period, label: p.period, group: 'Chosen' });
  return {
    name: 'period',
    label: 'Period',
    type: 'period',
    value,
    options,
    range: { from: p.from !== undefined ? fromDayOf(p.from) : '', to: p.to !== undefined ? toDayOf(p.to) : '', max: today },
  };
}
