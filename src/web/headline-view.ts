/*
 * The overview's first screen, ready for views/reports/overview.eta: the headline cards (amounts
 * rounded for people, exact in the title), their sparklines as inline SVG, and the compact
 * period control.
 */
import type { Coverage, Headline, HeadlineKpi } from '../reports/report.js';
import { PERIOD_PRESETS } from '../reports/shared/period.js';
import { formatValue } from './cells.js';
import type { PeriodPickerView } from './report-view.js';

export interface KpiCardView {
  label: string;
  /** The amount without its currency (one line), the currency as a suffix, the exact value as a title. */
  amount: string;
  currency: string;
  exact: string;
  lines: Array<{ text: string; className: string; title?: string }>;
  sparkline: SparklineView | null;
}

export interface SparklineView {
  points: string;
  width: number;
  height: number;
  label: string;
}

/** One row of cards per currency (amounts in different currencies are never side by side in one figure). */
export interface HeadlineView {
  rows: Array<{ currency: string; cards: KpiCardView[] }>;
}

const SPARK_WIDTH = 160;
const SPARK_HEIGHT = 28;

/** A polyline of the days' costs from 0 (bottom) to the highest day (top). */
function sparklineView(points: HeadlineKpi['sparkline'], currency: string): SparklineView | null {
  if (points.length < 2) return null;
  const max = Math.max(...points.map((p) => p.cost)) || 1;
  const step = SPARK_WIDTH / (points.length - 1);
  const xy = points.map((p, i) => `${(i * step).toFixed(1)},${(SPARK_HEIGHT - 2 - (p.cost / max) * (SPARK_HEIGHT - 4)).toFixed(1)}`);
  const first = points[0]!;
  const last = points[points.length - 1]!;
  return {
    points: xy.join(' '),
    width: SPARK_WIDTH,
    height: SPARK_HEIGHT,
    label: `Cost per day in ${currency}, the ${points.length} covered days of the last 30, ${first.day} to ${last.day}: from ${money(String(first.cost), currency)} to ${money(String(last.cost), currency)}`,
  };
}

const money = (value: string, currency: string, hourly = false) => formatValue(value, 'money', currency, hourly, false).text;

function changeLine(kpi: HeadlineKpi, previous: Headline['period']['previous']): { text: string; className: string; title?: string } {
  const span = `${previous.from} to ${previous.to}`;
  if (kpi.change_percent === null) {
    // The card says why in a few words; the title (and the JSON) carries the hours.
    const reason = kpi.change_reason ?? 'not given';
    return { text: `No change %: ${reason.replace(/ \(.*\)$/, '')}`, className: 'kpi-change kpi-change-none', title: `${reason}; previous period ${span}` };
  }
  const p = kpi.change_percent;
  const arrow = p > 0 ? '▲' : p < 0 ? '▼' : '=';
  const word = p > 0 ? 'up' : p < 0 ? 'down' : 'unchanged';
  return { text: `${arrow} ${word} ${Math.abs(p).toFixed(1)}% vs ${span}`, className: `kpi-change kpi-change-${word}` };
}

/** "7.1 of 28 days": the hours a coverage covers, in days. */
export const daysOf = (c: Pick<Coverage, 'covered_hours' | 'period_hours'>) => `${Math.round((c.covered_hours / 24) * 10) / 10} of ${Math.round((c.period_hours / 24) * 10) / 10} days`;

export function headlineView(headline: Headline): HeadlineView {
  const rows: HeadlineView['rows'] = [];
  for (const k of headline.kpis) {
    const c = k.currency;
    const cards: KpiCardView[] = [];
    rows.push({ currency: c, cards });
    cards.push({
      label: `Spend, ${headline.period.label}`,
      amount: k.spend === null ? 'no data' : money(k.spend, c),
      currency: k.spend === null ? '' : c,
      exact: k.spend === null ? 'no snapshot covers the period: unknown, not 0' : `${k.spend} ${c}`,
      lines: [changeLine(k, headline.period.previous)],
      sparkline: sparklineView(k.sparkline, c),
    });
    cards.push({
      label: 'Run-rate per month (now)',
      amount: k.price_per_month === null ? 'n/a' : money(k.price_per_month, c),
      currency: k.price_per_month === null ? '' : c,
      exact: k.price_per_month === null ? 'nothing runs' : `${k.price_per_month} ${c}`,
      lines: [{ text: k.price_per_hour === null ? '' : `${money(k.price_per_hour, c, true)} ${c} per hour`, className: 'kpi-hint' }],
      sparkline: null,
    });
    cards.push({
      label: `Projected ${k.month}, run-rate method`,
      amount: k.projected_month === null ? 'no data' : money(k.projected_month, c),
      currency: k.projected_month === null ? '' : c,
      exact: k.projected_month === null ? 'no snapshot covers an hour of this month yet: unknown, not 0' : `${k.projected_month} ${c}`,
      lines: [{ text: `Month to date + run-rate; data for ${daysOf(k.projection_coverage)}`, className: 'kpi-hint' }],
      sparkline: null,
    });
  }
  return { rows };
}

export interface PresetControlView {
  action: string;
  options: Array<{ value: string; label: string; selected: boolean }>;
  custom: boolean;
  from: string;
  to: string;
  max: string;
  hidden: Array<{ name: string; value: string }>;
}

/** One control for the period: the presets, a period chosen elsewhere (a month), and a custom range. */
export function presetControlView(picker: PeriodPickerView | null): PresetControlView | null {
  if (!picker) return null;
  const custom = picker.value === 'custom';
  const value = picker.value === '' ? 'mtd' : picker.value;
  const options = PERIOD_PRESETS.map((p) => ({ value: p.value, label: p.label, selected: p.value === value }));
  if (!custom && !options.some((o) => o.selected)) options.push({ value, label: value, selected: true });
  options.push({ value: 'custom', label: 'Custom range…', selected: custom });
  return { action: picker.action, options, custom, from: picker.from, to: picker.to, max: picker.max, hidden: picker.hidden };
}
