/** Budgets by month, quarter or year: one schema for the file's `budgets` and the web app's budget form. */
import { z } from 'zod';
import { normaliseTagKey, normaliseTagValue, type TagRules } from '../tags/normalise.js';
import type { ConfigProblem } from './problems.js';
import { BUDGET_PERIODS, type BudgetSettings } from './types.js';
import { nonEmptyName } from './validators.js';

/** Groupings a budget may cover besides the total (tag:<key> too). */
export const BUDGET_GROUPINGS = ['project', 'region', 'kind', 'flavor'] as const;
export const DEFAULT_BUDGET_THRESHOLDS: readonly number[] = Object.freeze([50, 80, 100]);
/** Largest amount: 15 digits before the point, 6 after. */
const BUDGET_AMOUNT = /^\d{1,15}(\.\d{1,6})?$/;

const amountSchema = z
  .string({ error: 'must be a decimal number in a string, e.g. "50000" or "1234.50" (exact, never a float)' })
  .trim()
  .regex(BUDGET_AMOUNT, { error: 'must be a decimal number such as 50000 or 1234.50 (at most 15 digits before the point and 6 after)' })
  .refine((a) => /[1-9]/.test(a), { error: 'must be greater than 0' })
  .transform((a) => a.replace(/^0+(?=\d)/, '').replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''));

/**
 * One budget, as in the configuration file and in the web app's budget form (one schema for
 * both): `by` absent = the total; `period` (default month) with `amount` for one period, or
 * `amount_per_month`, the monthly form; amounts are decimal strings (exact, never a float).
 */
export const BudgetSchema = z
  .strictObject({
    name: nonEmptyName.max(100, { error: 'must be at most 100 characters' }),
    by: z
      .string()
      .trim()
      .refine((b) => (BUDGET_GROUPINGS as readonly string[]).includes(b) || /^tag:\S/.test(b), {
        error: `must be one of ${BUDGET_GROUPINGS.join(', ')} or tag:<key> (leave it out for the total)`,
      })
      .optional(),
    value: nonEmptyName.optional(),
    currency: z
      .string()
      .trim()
      .regex(/^[A-Za-z]{3}$/, { error: 'must be an ISO 4217 currency code of 3 letters, e.g. EUR' })
      .transform((c) => c.toUpperCase()),
    period: z.enum(BUDGET_PERIODS, { error: `must be one of ${BUDGET_PERIODS.join(', ')}` }).optional(),
    amount: amountSchema.optional(),
    amount_per_month: amountSchema.optional(),
    thresholds: z
      .array(z.int({ error: 'must be whole percentages' }).min(1, { error: 'must be from 1 to 1000 (percent)' }).max(1000, { error: 'must be from 1 to 1000 (percent)' }))
      .min(1, { error: 'must name at least one percentage' })
      .max(10, { error: 'must have at most 10 percentages' })
      .refine((t) => new Set(t).size === t.length, { error: 'must not repeat a percentage' })
      .transform((t) => [...t].sort((a, b) => a - b))
      .default([...DEFAULT_BUDGET_THRESHOLDS]),
    notify: z
      .array(nonEmptyName)
      .refine((n) => new Set(n).size === n.length, { error: 'must not repeat a channel' })
      .default([]),
  })
  .superRefine((b, ctx) => {
    if (b.by !== undefined && b.value === undefined) ctx.addIssue({ code: 'custom', path: ['value'], message: `is required with by (the group of ${b.by} the budget covers)` });
    if (b.by === undefined && b.value !== undefined) ctx.addIssue({ code: 'custom', path: ['by'], message: 'is required with value (e.g. "tag:team"); leave both out for the total' });
    if (b.amount !== undefined && b.amount_per_month !== undefined) ctx.addIssue({ code: 'custom', path: ['amount_per_month'], message: 'is the monthly form of amount: give one of them, not both' });
    else if (b.amount === undefined && b.amount_per_month === undefined) ctx.addIssue({ code: 'custom', path: ['amount'], message: 'is required: the amount for one period (or amount_per_month for a monthly budget)' });
    else if (b.amount_per_month !== undefined && b.period !== undefined && b.period !== 'month') ctx.addIssue({ code: 'custom', path: ['amount_per_month'], message: `is for monthly budgets: with period "${b.period}" give amount` });
  });
export type BudgetInput = z.input<typeof BudgetSchema>;

/**
 * The file's budgets with `by`'s tag key and `value` through the tag rules, so that they name the
 * groups the reports show; names must be unique (case-insensitively).
 */
export function budgetSettings(list: z.output<typeof BudgetSchema>[], rules: TagRules, problems: ConfigProblem[]): BudgetSettings[] {
  const seen = new Map<string, number>();
  return list.map((b, i) => {
    const key = b.name.toLowerCase();
    const first = seen.get(key);
    if (first !== undefined) problems.push({ path: `budgets[${i}].name`, message: `repeats budgets[${first}] (budget names are compared case-insensitively)` });
    else seen.set(key, i);
    return normaliseBudget(b, rules);
  });
}

/** A parsed budget (file or web form) as settings: a tag grouping's key and value normalised. */
export function normaliseBudget(b: z.output<typeof BudgetSchema>, rules: TagRules): BudgetSettings {
  let by = b.by ?? null;
  let value = b.value ?? null;
  if (by !== null && value !== null && by.startsWith('tag:')) {
    const tagKey = normaliseTagKey(by.slice(4), rules);
    by = `tag:${tagKey}`;
    value = normaliseTagValue(tagKey, value, rules);
  }
  return { name: b.name, by, value, currency: b.currency, period: b.period ?? 'month', amount: (b.amount ?? b.amount_per_month)!, thresholds: b.thresholds, notify: b.notify };
}
