/**
 * Spend anomalies, explained (docs/anomalies.md): for every group of a watched grouping and every
 * currency, each complete UTC day's spend against the median and MAD of its previous complete days
 * (shared/anomaly-stats.ts); a flagged day is explained from the snapshots
 * (shared/anomaly-explain.ts). A day the snapshots do not fully cover is a data gap, its own row,
 * never a spend anomaly, and is left out of every baseline. Daily figures are the cost model's
 * (the same as the monthly report), summed in SQL.
 */
import { z } from 'zod';
import { gapCapsFor, reachSeconds } from '../costing/gap-caps.js';
import { PRICED_KINDS } from '../costing/pricing.js';
import { absDecimal, compareDecimal } from '../read-models/decimal.js';
import type { Column, Coverage, Row, SummaryItem } from './report.js';
import { listRows } from './shared/batches.js';
import { dimensionOf } from './shared/costs.js';
import type { ExplanationKey, ExplanationSource } from '../costing/derive/anomaly-explanations.js';
import { comparedNote, explainDay, prepareExplanation, summarise, type ExplanationLine } from './shared/anomaly-explain.js';
import { judge, type Judgement } from './shared/anomaly-stats.js';
import { dailyGaps, type DayGap } from '../costing/coverage.js';
import { coveredText, periodCoverage, rangeCoverage } from './shared/coverage.js';
import { defineReport } from './shared/define.js';
import { scopedCostNotes, scopeOf } from './shared/access-scope.js';
import { describeAccessScope } from '../auth/access-scope.js';
import { addDays, dimensionLabel, kindLabel } from './shared/format.js';
import { optionalSelect } from './shared/fields.js';
import { invalidParameter } from './shared/params.js';
import { checkPeriodParams, periodField, periodGiven, periodParamShape, resolvePeriod, type ResolvedPeriod } from './shared/period.js';
import { dailyCostsFor } from '../costing/cost-over-time.js';
import { daysBetween, gapCapText } from './shared/time.js';
import type { Report, ReportCtx } from './shared/types.js';

/** Days shown when no period is given: the last 30 complete days. */
export const DEFAULT_DAYS = 30;

export const ROW_KINDS = ['spike', 'drop', 'data gap'] as const;
export type RowKind = (typeof ROW_KINDS)[number];

export const anomaliesParams = z
  .strictObject({
    /** One of the configured anomaly groupings (default: the first). */
    by: z.string().max(259, { error: 'by must be one of the anomaly groupings' }).optional(),
    ...periodParamShape,
    kind: z.enum(ROW_KINDS, { error: `kind must be one of ${ROW_KINDS.join(', ')}` }).optional(),
  })
  .superRefine(checkPeriodParams);
export type AnomaliesParams = z.infer<typeof anomaliesParams>;

export interface AnomalyRow {
  day: string;
  kind: RowKind;
  group: string | null;
  currency: string | null;
  spend: string | null;
  judgement: Judgement | null;
  /** Baseline days used (complete, covered). */
  baselineDays: number;
  /** First day of the run of consecutive usable days flagged the same way (this day when it starts one). */
  since: string;
  gaps: DayGap[];
}

export interface AnomalyScan {
  dimension: string;
  fromDay: string;
  toDay: string;
  /** Spikes and drops, then data gaps, newest day first. */
  rows: AnomalyRow[];
  /** Group-days in the range skipped for too few baseline days. */
  notEnoughHistory: number;
  /** The last complete day (its end plus the longest gap cap has passed). */
  lastCompleteDay: string;
}

const DAY_MS = 86_400_000;

/** The last UTC day whose end plus the longest gap cap has passed: no rate that holds on it can still be running. */
export function lastCompleteDay(ctx: Pick<ReportCtx, 'config' | 'now'>): string {
  const reach = reachSeconds(gapCapsFor(ctx.config)) * 1000;
  return new Date(Math.floor((ctx.now.getTime() - reach) / DAY_MS) * DAY_MS - DAY_MS).toISOString().slice(0, 10);
}

/**
 * Judges every (group, currency) of `dimension` on each complete day of [fromDay, toDay] against
 * its previous `baselineDays` complete days, and lists the days with data gaps.
 */
export async function scanAnomalies(ctx: ReportCtx, dimension: string, range: { fromDay: string; toDay: string }): Promise<AnomalyScan> {
  const settings = ctx.config.anomalies;
  const last = lastCompleteDay(ctx);
  const toDay = range.toDay < last ? range.toDay : last;
  const empty = { dimension, fromDay: range.fromDay, toDay, rows: [], notEnoughHistory: 0, lastCompleteDay: last };
  if (range.fromDay > toDay) return empty;
  const windowFrom = addDays(range.fromDay, -settings.baselineDays);
  const [gaps, costs, first] = await Promise.all([
    dailyGaps(ctx.db, ctx.config, { fromDay: windowFrom, toDay }, settings.baselineDays),
    dailyCostsFor(ctx.db, ctx.config, ctx.now, dimension, windowFrom, toDay, { scope: scopeOf(ctx) }),
    ctx.db.query<{ first_at: Date | null }>('select min(taken_at) as first_at from snapshots where complete and kind = any($1::text[])', [PRICED_KINDS]),
  ]);
  const firstAt = first[0]?.first_at ? new Date(first[0].first_at).getTime() : null;
  if (firstAt === null) return empty;
  const gapsByDay = new Map<string, DayGap[]>();
  for (const g of gaps) gapsByDay.set(g.day, [...(gapsByDay.get(g.day) ?? []), g]);
  // A usable day: collection had begun by its start, and every expected scope covered all of it.
  const usable = (day: string) => Date.parse(`${day}T00:00:00Z`) >= firstAt && !gapsByDay.has(day);

  const series = new Map<string, { group: string; currency: string; byDay: Map<string, string> }>();
  for (const c of costs) {
    if (c.currency === null || c.cost === null) continue;
    const key = `${c.currency}\u0000${c.group_value}`;
    const s = series.get(key) ?? { group: c.group_value, currency: c.currency, byDay: new Map<string, string>() };
    s.byDay.set(c.day, c.cost);
    series.set(key, s);
  }

  const rows: AnomalyRow[] = [];
  let notEnoughHistory = 0;
  const days = daysBetween(range.fromDay, toDay);
  // Per series: the verdict of the previous usable day and the first day of its run.
  const runs = new Map<string, { verdict: string; since: string }>();
  for (const day of days) {
    if (!usable(day)) continue;
    const baselineDays = daysBetween(addDays(day, -settings.baselineDays), addDays(day, -1)).filter(usable);
    for (const [key, s] of series.entries()) {
      const previous = runs.get(key);
      runs.delete(key);
      const spend = s.byDay.get(day) ?? '0';
      // A group with no spend on the day nor in its baseline is not there at all.
      if (compareDecimal(spend, '0') === 0 && !baselineDays.some((d) => s.byDay.has(d))) continue;
      if (baselineDays.length < settings.minBaselineDays) {
        notEnoughHistory++;
        continue;
      }
      const j = judge(spend, baselineDays.map((d) => s.byDay.get(d) ?? '0'), {
        madMultiplier: settings.madMultiplier,
        minChange: settings.minChange.byCurrency[s.currency] ?? settings.minChange.default,
        minChangePercent: settings.minChangePercent,
      });
      if (j.verdict === 'normal') continue;
      const since = previous?.verdict === j.verdict ? previous.since : day;
      runs.set(key, { verdict: j.verdict, since });
      rows.push({ day, kind: j.verdict, group: s.group, currency: s.currency, spend, judgement: j, baselineDays: baselineDays.length, since, gaps: [] });
    }
  }
  for (const day of days) {
    const dayGaps = gapsByDay.get(day);
    if (dayGaps && Date.parse(`${day}T00:00:00Z`) >= firstAt) rows.push({ day, kind: 'data gap', group: null, currency: null, spend: null, judgement: null, baselineDays: 0, since: day, gaps: dayGaps });
  }
  rows.sort(
    (a, b) =>
      b.day.localeCompare(a.day) ||
      ROW_KINDS.indexOf(a.kind) - ROW_KINDS.indexOf(b.kind) ||
      (a.currency ?? '').localeCompare(b.currency ?? '') ||
      compareDecimal(absDecimal(b.judgement?.change ?? '0'), absDecimal(a.judgement?.change ?? '0')) ||
      (a.group ?? '').localeCompare(b.group ?? ''),
  );
  return { dimension, fromDay: range.fromDay, toDay, rows, notEnoughHistory, lastCompleteDay: last };
}

/** A flagged row with its explanation (spikes and drops) or its gaps (data gaps), as a report row. */
export async function explainRow(ctx: ReportCtx, dimension: string, r: AnomalyRow): Promise<Row> {
  const base: Row = {
    day: r.day,
    group: r.group,
    currency: r.currency,
    spend: r.spend,
    baseline_median: r.judgement?.median ?? null,
    change: r.judgement?.change ?? null,
    change_percent: r.judgement?.changePercent ?? null,
    kind: r.kind,
  };
  if (r.kind === 'data gap') {
    const lines = r.gaps.map((g) => `${kindLabel(g.kind)} in ${g.scope_key}: snapshots cover ${g.covered_hours} of 24 h`);
    return {
      ...base,
      explanation: `Data gap: ${r.gaps.length} collection${r.gaps.length === 1 ? '' : 's'} did not cover the whole day (a failed collection, a gap longer than the cap, a restart). Spend this day is incomplete, not an anomaly.`,
      explanation_lines: lines,
      lines: r.gaps.map((g) => ({ kind: g.kind, scope: g.scope_key, covered_hours: g.covered_hours })),
    };
  }
  const scope = scopeOf(ctx);
  if (scope && !(dimension === scope.by && scope.values.includes(r.group!))) {
    // The explanation reads the whole group's resources, other teams' included: a team sees its own group's only.
    return { ...base, explanation: `Not explained within your access scope (${describeAccessScope(scope)}): group by ${scope.by} to see what changed in your team's resources.`, explanation_lines: [], lines: [], since: r.since };
  }
  const e = await explainDay(ctx.db, ctx.config, ctx.now, { day: r.day, dimension, group: r.group!, currency: r.currency! });
  const persists = `Nothing of the group changed in the snapshots that day: the ${r.kind} flagged since ${r.since} persists (flagged until the new level makes up half of the baseline).`;
  return {
    ...base,
    explanation: e.lines.length === 0 && r.since < r.day ? persists : summarise(e, r.currency!),
    explanation_lines: [...e.lines.map((l) => l.text), ...(e.more > 0 ? [`and ${e.more} more`] : []), ...comparedNote(e).map((n) => `compared ${n}`)],
    lines: e.lines satisfies ExplanationLine[],
    explained: e.explained,
    since: r.since,
    baseline: { days: r.baselineDays, median: r.judgement!.median, mad: r.judgement!.mad, bound: r.judgement!.bound },
  };
}

/**
 * The explanations to store after each collection run (costing/derive/anomaly-explanations.ts):
 * every spike and drop the report shows by default, the last DEFAULT_DAYS complete days of each
 * anomaly grouping, so that the report reads explanations instead of pricing every resource that
 * changed on the day.
 */
export function explanationSource(ctx: ReportCtx): ExplanationSource {
  return {
    async candidates() {
      const keys: ExplanationKey[] = [];
      for (const grouping of ctx.config.anomalies.groupings) {
        const r = await resolve(ctx, { by: grouping });
        for (const row of r.scan.rows) {
          if (row.kind !== 'data gap') keys.push({ day: row.day, dimension: r.dimension, group: row.group!, currency: row.currency! });
        }
      }
      return keys;
    },
    prepare: (key) => prepareExplanation(ctx.db, ctx.config, ctx.now, key),
  };
}

const COLUMNS: Column[] = [
  { key: 'day', label: 'Day', kind: 'date' },
  { key: 'group', label: 'Group', kind: 'text' },
  { key: 'currency', label: 'Currency', kind: 'text' },
  { key: 'spend', label: 'Spend', kind: 'money', currencyKey: 'currency' },
  { key: 'baseline_median', label: 'Baseline median', kind: 'money', currencyKey: 'currency' },
  { key: 'change', label: 'Change', kind: 'money', currencyKey: 'currency' },
  { key: 'change_percent', label: 'Change %', kind: 'percent' },
  { key: 'kind', label: 'Kind', kind: 'text' },
  { key: 'explanation', label: 'Explanation', kind: 'text' },
  { key: 'explanation_lines', label: 'What changed', kind: 'lines' },
];

/** The coverage of the baseline days before the period (what its first day is compared with). */
function baselineCoverage(ctx: ReportCtx, period: ResolvedPeriod): Promise<Coverage> {
  return rangeCoverage(ctx, { fromDay: addDays(period.fromDay, -ctx.config.anomalies.baselineDays), toDay: addDays(period.fromDay, -1) });
}

interface Resolved {
  dimension: string;
  period: ResolvedPeriod;
  scan: AnomalyScan;
  rows: AnomalyRow[];
}

function dimensionFor(ctx: ReportCtx, by: string | undefined): string {
  const groupings = ctx.config.anomalies.groupings;
  if (by === undefined || by === '') return groupings[0]!;
  const match = groupings.find((g) => g === dimensionOf(by, ctx.config));
  if (!match) throw invalidParameter('by', `by must be one of the anomaly groupings: ${groupings.join(', ')}`);
  return match;
}

async function resolve(ctx: ReportCtx, params: AnomaliesParams): Promise<Resolved> {
  const dimension = dimensionFor(ctx, params.by);
  const last = lastCompleteDay(ctx);
  const period: ResolvedPeriod = periodGiven(params)
    ? resolvePeriod(params, ctx.now)
    : resolvePeriod({ from: addDays(last, -(DEFAULT_DAYS - 1)), to: last }, ctx.now);
  const scan = await scanAnomalies(ctx, dimension, { fromDay: period.fromDay, toDay: period.lastDay });
  const rows = params.kind ? scan.rows.filter((r) => r.kind === params.kind) : scan.rows;
  return { dimension, period: periodGiven(params) ? period : { ...period, label: `last ${DEFAULT_DAYS} complete days` }, scan, rows };
}

export const anomaliesReport: Report<AnomaliesParams> = defineReport(
  {
    name: 'anomalies',
    title: 'Spend anomalies',
    description: 'Days whose spend of a team or project jumped or fell against its usual level, with what changed in the snapshots; data gaps shown apart.',
    section: 'cost',
    params: anomaliesParams,
    scoped: true,

    async run(ctx, params, page) {
      const r = await resolve(ctx, params);
      const [rows, coverage, previousCoverage] = await Promise.all([
        Promise.all(r.rows.slice(page.offset, page.offset + page.limit).map((row) => explainRow(ctx, r.dimension, row))),
        periodCoverage(ctx, r.period),
        baselineCoverage(ctx, r.period),
      ]);
      const count = (kind: RowKind) => r.scan.rows.filter((x) => x.kind === kind).length;
      const s = ctx.config.anomalies;
      const summary: SummaryItem[] = [
        { label: 'Spikes', value: count('spike'), kind: 'int' },
        { label: 'Drops', value: count('drop'), kind: 'int' },
        { label: 'Days with data gaps', value: count('data gap'), kind: 'int' },
        { label: 'Group-days without enough history', value: r.scan.notEnoughHistory, kind: 'int', hint: `fewer than ${s.minBaselineDays} usable baseline days` },
      ];
      const minChanges = [`${s.minChange.default}`, ...Object.entries(s.minChange.byCurrency).map(([c, v]) => `${v} ${c}`)].join(', ');
      return {
        title: `Spend anomalies by ${dimensionLabel(r.dimension)}, ${r.period.label}`,
        summary,
        charts: [],
        columns: COLUMNS,
        rows,
        totalRows: r.rows.length,
        coverage,
        previousCoverage,
        notes: [
          ...(await scopedCostNotes(ctx)),
          `The baseline days before the period (${previousCoverage.from.slice(0, 10)} to ${addDays(previousCoverage.to.slice(0, 10), -1)}) ${coveredText(previousCoverage)}; only the days snapshots cover in full count in a baseline, never an uncovered day as 0.`,
          `Each complete day (UTC, up to ${r.scan.lastCompleteDay}) of each group and currency is compared with the median of its previous ${s.baselineDays} complete days. ` +
            `It is flagged when the change exceeds ${s.madMultiplier} x 1.4826 x the median absolute deviation of those days, is at least ${minChanges} in the currency and at least ${s.minChangePercent}% of the median.`,
          'The explanation compares the snapshots before the day with those during it: each line is a resource that appeared, disappeared, started, stopped, changed flavor or price, or moved between groups (tags), with its cost impact on the day.',
          'A day the snapshots do not fully cover is a data gap: it is listed apart, never flagged as an anomaly, and left out of every baseline.',
          ...(r.scan.notEnoughHistory > 0 ? [`${r.scan.notEnoughHistory} group-days had fewer than ${s.minBaselineDays} usable baseline days: not judged (not enough history), never guessed.`] : []),
          `Daily spend is the cost model's (the monthly report's figures): each snapshot's run-rate holds until the next one, ${gapCapText(ctx.config)} are capped.`,
        ],
      };
    },

    async export(ctx, params) {
      const r = await resolve(ctx, params);
      const rows: Row[] = [];
      for (const row of r.rows) rows.push(await explainRow(ctx, r.dimension, row));
      const [coverage, previousCoverage] = await Promise.all([periodCoverage(ctx, r.period), baselineCoverage(ctx, r.period)]);
      return { columns: COLUMNS, rows: listRows(rows), coverage, previousCoverage };
    },

    async filters(ctx, params) {
      const groupings = ctx.config.anomalies.groupings;
      return [
        periodField(params, ctx.now, `Last ${DEFAULT_DAYS} complete days`),
        { name: 'by', label: 'Group by', type: 'select', value: dimensionFor(ctx, params.by), options: groupings.map((g) => ({ value: g, label: dimensionLabel(g) })) },
        optionalSelect('kind', 'Kind', params.kind, ROW_KINDS.map((k) => [k, k] as const), 'All'),
      ];
    },
  },
  { cached: true },
);
