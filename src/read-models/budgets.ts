/**
 * The budgets in force: those of the configuration file (read-only in the web app: the file stays
 * their one source) and those admins made in the web app (table `budgets`), shared by the budgets
 * report, the budget editor and the threshold alerts.
 */
import type { BudgetPeriod, BudgetSettings, DeepReadonly } from '../config/index.js';
import type { Queryable } from '../db/connection.js';

export type BudgetSource = 'config' | 'app';

/** A budget in force: the configuration's shape, with where it comes from and its state. */
export interface Budget extends BudgetSettings {
  /** `config:<name>` for a configured budget, the row id (digits) for one made in the web app. */
  id: string;
  source: BudgetSource;
  archived: boolean;
  /** Who last changed it, and when (null for configured budgets). */
  updatedBy: string | null;
  updatedAt: Date | null;
}

export const CONFIG_BUDGET_PREFIX = 'config:';

export function configuredBudgets(configured: DeepReadonly<BudgetSettings[]> | null): Budget[] {
  return (configured ?? []).map((b) => ({
    ...b,
    id: `${CONFIG_BUDGET_PREFIX}${b.name}`,
    source: 'config' as const,
    thresholds: [...b.thresholds],
    notify: [...b.notify],
    archived: false,
    updatedBy: null,
    updatedAt: null,
  }));
}

interface BudgetRow {
  id: string;
  name: string;
  by: string | null;
  value: string | null;
  currency: string;
  period: BudgetPeriod;
  amount: string;
  thresholds: number[];
  notify: string[];
  archived_at: Date | string | null;
  updated_by: string;
  updated_at: Date | string;
}

const COLUMNS = `id::text as id, name, by, value, currency, period, trim_scale(amount)::text as amount, thresholds, notify, archived_at, updated_by, updated_at`;

function fromRow(r: BudgetRow): Budget {
  return {
    id: r.id,
    source: 'app',
    name: r.name,
    by: r.by,
    value: r.value,
    currency: r.currency,
    period: r.period,
    amount: r.amount,
    thresholds: r.thresholds,
    notify: r.notify,
    archived: r.archived_at !== null,
    updatedBy: r.updated_by,
    updatedAt: new Date(r.updated_at),
  };
}

/** Budgets made in the web app, by name; archived ones only when asked. */
export async function appBudgets(q: Queryable, opts: { archived?: boolean } = {}): Promise<Budget[]> {
  const rows = await q.query<BudgetRow & Record<string, unknown>>(
    `select ${COLUMNS} from budgets ${opts.archived ? '' : 'where archived_at is null'} order by lower(name), id`,
  );
  return rows.map(fromRow);
}

/** One budget made in the web app (archived or not), or null. */
export async function appBudget(q: Queryable, id: number): Promise<Budget | null> {
  const rows = await q.query<BudgetRow & Record<string, unknown>>(`select ${COLUMNS} from budgets where id = $1`, [id]);
  return rows[0] ? fromRow(rows[0]) : null;
}

/** Every budget in force: the configured ones first (in file order), then the app's by name. */
export async function activeBudgets(q: Queryable, configured: DeepReadonly<BudgetSettings[]> | null): Promise<Budget[]> {
  return [...configuredBudgets(configured), ...(await appBudgets(q))];
}
