/** Spend anomalies: the watched groupings, the baseline and the thresholds, and opt-in alerts. */
import { z } from 'zod';
import { normaliseTagKey, type TagRules } from '../tags/normalise.js';
import { unknownChannelProblems } from './notify.js';
import type { ConfigProblem } from './problems.js';
import type { AnomalySettings } from './types.js';
import { nonEmptyName } from './validators.js';

export const DEFAULT_ANOMALY_GROUPINGS = ['tag:team', 'project'] as const;

const decimalText = (what: string) =>
  z
    .union([z.string(), z.number()], { error: `must be a ${what} (a number or decimal text such as "10")` })
    .transform((v) => String(v).trim())
    .refine((v) => /^\d+(\.\d+)?$/.test(v), { error: `must be a ${what} (a number or decimal text such as "10")` });

const groupingName = nonEmptyName.refine((v) => ['project', 'region', 'kind', 'flavor', 'state'].includes(v) || (v.startsWith('tag:') && v.slice(4).trim() !== ''), {
  error: 'must be project, region, kind, flavor, state or tag:<key>',
});

export const AnomaliesSchema = z.strictObject({
  groupings: z.array(groupingName).min(1, { error: 'must name at least one grouping' }).default([...DEFAULT_ANOMALY_GROUPINGS]),
  baseline_days: z.int().min(3).max(90).default(14),
  min_baseline_days: z.int().min(3).max(90).default(7),
  mad_multiplier: decimalText('non-negative number').default('3'),
  min_change: decimalText('non-negative amount').default('10'),
  min_change_by_currency: z.record(z.string().trim().regex(/^[A-Za-z]{3}$/, { error: 'must be a currency code such as EUR' }), decimalText('non-negative amount')).default({}),
  min_change_percent: decimalText('non-negative percentage').default('20'),
  alert_groupings: z
    .array(z.strictObject({ by: groupingName, notify: z.array(nonEmptyName).min(1, { error: 'must name at least one channel' }) }))
    .default([]),
});

export function anomalySettings(
  raw: z.output<typeof AnomaliesSchema>,
  tags: Pick<TagRules, 'tagAliases' | 'tagKeyCase'>,
  channels: readonly { name: string }[],
  problems: ConfigProblem[],
): AnomalySettings {
  const dimension = (by: string) => (by.startsWith('tag:') ? `tag:${normaliseTagKey(by.slice(4).trim(), tags)}` : by);
  const groupings = [...new Set(raw.groupings.map(dimension))];
  if (raw.min_baseline_days > raw.baseline_days) {
    problems.push({ path: 'anomalies.min_baseline_days', message: `must not exceed baseline_days (${raw.baseline_days})` });
  }
  const alerts = raw.alert_groupings.map((a, i) => {
    const grouping = dimension(a.by);
    if (!groupings.includes(grouping)) {
      problems.push({ path: `anomalies.alert_groupings[${i}].by`, message: `must be one of the watched groupings (${groupings.join(', ')})` });
    }
    problems.push(...unknownChannelProblems(a.notify, `anomalies.alert_groupings[${i}].notify`, channels));
    return { grouping, notify: [...new Set(a.notify)] };
  });
  return {
    groupings,
    baselineDays: raw.baseline_days,
    minBaselineDays: raw.min_baseline_days,
    madMultiplier: raw.mad_multiplier,
    minChange: { default: raw.min_change, byCurrency: Object.fromEntries(Object.entries(raw.min_change_by_currency).map(([c, v]) => [c.toUpperCase(), v])) },
    minChangePercent: raw.min_change_percent,
    alerts,
  };
}
