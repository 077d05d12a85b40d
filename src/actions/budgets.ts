/**
 * Budgets made in the web app: create, change, archive. Each change and its audit row are written
 * in one transaction, so the audit log names every change that happened and nothing that did not.
 * Budgets of the configuration file are not stored and cannot be changed here.
 */
import type { BudgetSettings } from '../config/index.js';
import type { Database, Queryable } from '../db/connection.js';
import { executeStatement, queryRows, sql } from '../db/statement.js';
import { appBudget, type Budget } from '../read-models/budgets.js';
import { AUDIT_ACTIONS, appendAudit, type AuditAction, type AuditResult } from './audit.js';

export interface BudgetActor {
  name: string;
  role: string;
}

/** The name is taken (by a configured budget or another budget that is not archived). */
export class BudgetNameTakenError extends Error {
  constructor(readonly budgetName: string) {
    super(`a budget named "${budgetName}" already exists (names are compared case-insensitively)`);
    this.name = 'BudgetNameTakenError';
  }
}

export interface BudgetWriteDeps {
  db: Database;
  /** Names of the configured budgets: a budget made here may not take one of them. */
  configuredNames: readonly string[];
  now: Date;
}

/** "amount_per_month 50000 -> 60000; thresholds 50,80,100 -> 80,100", for the audit log. */
function changes(before: Budget, after: BudgetSettings): string[] {
  const fields: Array<[string, unknown, unknown]> = [
    ['name', before.name, after.name],
    ['by', before.by ?? 'total', after.by ?? 'total'],
    ['value', before.value ?? '', after.value ?? ''],
    ['currency', before.currency, after.currency],
    ['period', before.period, after.period],
    // A monthly budget's amount keeps its monthly name (the configuration's amount_per_month).
    [before.period === 'month' && after.period === 'month' ? 'amount_per_month' : 'amount', before.amount, after.amount],
    ['thresholds', before.thresholds.join(','), after.thresholds.join(',')],
    ['notify', before.notify.join(','), after.notify.join(',')],
  ];
  return fields.filter(([, a, b]) => a !== b).map(([k, a, b]) => `${k} ${String(a) || '(none)'} -> ${String(b) || '(none)'}`);
}

function describe(b: BudgetSettings): string {
  return `${b.by === null ? 'total' : `${b.by}=${b.value}`}, ${b.currency} ${b.amount} per ${b.period}, alerts at ${b.thresholds.join(',')}%${b.notify.length ? ` to ${b.notify.join(',')}` : ''}`;
}

async function audit(tx: Queryable, deps: Pick<BudgetWriteDeps, 'now'>, actor: BudgetActor, action: AuditAction, result: AuditResult, reason: string): Promise<void> {
  await appendAudit(tx, { at: deps.now, actor: actor.name, role: actor.role, action, instanceId: null, projectId: null, regionId: null, reason, dryRun: false, result, error: null, taskIds: [] });
}

async function checkName(tx: Queryable, deps: BudgetWriteDeps, name: string, exceptId: number | null): Promise<void> {
  if (deps.configuredNames.some((n) => n.toLowerCase() === name.toLowerCase())) throw new BudgetNameTakenError(name);
  const rows = await tx.query<{ id: string }>(`select id from budgets where archived_at is null and lower(name) = lower($1) and ($2::bigint is null or id <> $2)`, [name, exceptId]);
  if (rows.length > 0) throw new BudgetNameTakenError(name);
}

/** A unique violation of budgets_active_name_uq (two admins at once) is the same "name taken". */
function nameTaken(err: unknown, name: string): never {
  const e = err as { code?: string; constraint?: string; message?: string };
  if (e?.code === '23505' || /budgets_active_name_uq/.test(e?.message ?? '')) throw new BudgetNameTakenError(name);
  throw err;
}

export async function createBudget(deps: BudgetWriteDeps, actor: BudgetActor, b: BudgetSettings): Promise<number> {
  return deps.db
    .transaction(async (tx) => {
      await checkName(tx, deps, b.name, null);
      const at = deps.now.toISOString();
      const [row] = await queryRows<{ id: string }>(
        tx,
        sql`insert into budgets (name, by, value, currency, period, amount, thresholds, notify, created_at, created_by, updated_at, updated_by)
         values (${b.name}, ${b.by}, ${b.value}, ${b.currency}, ${b.period}, ${b.amount}::numeric, ${JSON.stringify(b.thresholds)}::jsonb,
           ${JSON.stringify(b.notify)}::jsonb, ${at}, ${actor.name}, ${at}, ${actor.name}) returning id`,
      );
      const id = Number(row!.id);
      await audit(tx, deps, actor, AUDIT_ACTIONS.createBudget, 'budget_created', `budget #${id} "${b.name}": ${describe(b)}`);
      return id;
    })
    .catch((err: unknown) => (err instanceof BudgetNameTakenError ? Promise.reject(err) : nameTaken(err, b.name)));
}

/** Changes a budget that is not archived; null when there is none with this id. Nothing changed: no row, no audit. */
export async function changeBudget(deps: BudgetWriteDeps, actor: BudgetActor, id: number, b: BudgetSettings): Promise<Budget | null> {
  return deps.db
    .transaction(async (tx) => {
      await tx.query('select id from budgets where id = $1 for update', [id]);
      const before = await appBudget(tx, id);
      if (!before || before.archived) return null;
      const diff = changes(before, b);
      if (diff.length === 0) return before;
      await checkName(tx, deps, b.name, id);
      await executeStatement(
        tx,
        sql`update budgets set name = ${b.name}, by = ${b.by}, value = ${b.value}, currency = ${b.currency}, period = ${b.period}, amount = ${b.amount}::numeric,
          thresholds = ${JSON.stringify(b.thresholds)}::jsonb, notify = ${JSON.stringify(b.notify)}::jsonb, updated_at = ${deps.now.toISOString()},
          updated_by = ${actor.name} where id = ${id}`,
      );
      await audit(tx, deps, actor, AUDIT_ACTIONS.changeBudget, 'budget_changed', `budget #${id} "${before.name}": ${diff.join('; ')}`);
      return appBudget(tx, id);
    })
    .catch((err: unknown) => (err instanceof BudgetNameTakenError ? Promise.reject(err) : nameTaken(err, b.name)));
}

/** Archives a budget (it stops counting and alerting; the row stays); null when there is none to archive. */
export async function archiveBudget(deps: Omit<BudgetWriteDeps, 'configuredNames'>, actor: BudgetActor, id: number): Promise<Budget | null> {
  return deps.db.transaction(async (tx) => {
    const rows = await tx.query<{ name: string }>(
      `update budgets set archived_at = $2, archived_by = $3, updated_at = $2, updated_by = $3 where id = $1 and archived_at is null returning name`,
      [id, deps.now.toISOString(), actor.name],
    );
    if (rows.length === 0) return null;
    await audit(tx, deps, actor, AUDIT_ACTIONS.archiveBudget, 'budget_archived', `budget #${id} "${rows[0]!.name}" archived`);
    return appBudget(tx, id);
  });
}
