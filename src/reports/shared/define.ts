/**
 * Every report is defined through defineReport, which gives its queries a database handle that
 * runs each statement with JIT compilation off. Postgres compiles any plan whose estimated cost
 * passes jit_above_cost (100,000 by default); report plans over 100,000-row snapshots pass it,
 * and compiling them costs 100 ms to seconds while running them takes a few ms. (Setting
 * `jit = off` for the whole pool in connection.ts would make this wrapper unnecessary.)
 */
import type { Database, Queryable, Row } from '../../db/connection.js';
import type { Report, ReportCtx } from './types.js';

function runWithoutJit<T>(db: Database, fn: (tx: Queryable) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query("select set_config('jit', 'off', true)");
    return fn(tx);
  });
}

/** The same database, every query and execute in its own short transaction with JIT off. */
export function withoutJit(db: Database): Database {
  if ((db as { [NO_JIT]?: true })[NO_JIT]) return db;
  return Object.assign(Object.create(null) as object, db, {
    [NO_JIT]: true,
    query: <R extends Row = Row>(text: string, params?: readonly unknown[]) => runWithoutJit(db, (tx) => tx.query<R>(text, params)),
    execute: <R extends Row = Row>(text: string, params?: readonly unknown[]) => runWithoutJit(db, (tx) => tx.execute<R>(text, params)),
  }) as Database;
}

const NO_JIT = Symbol('cloudtally.reports.noJit');

function contextWithoutJit(ctx: ReportCtx): ReportCtx {
  return { ...ctx, db: withoutJit(ctx.db) };
}

export function defineReport<P>(report: Report<P>): Report<P> {
  return {
    ...report,
    run: (ctx, params, page) => report.run(contextWithoutJit(ctx), params, page),
    export: (ctx, params) => report.export(contextWithoutJit(ctx), params),
    ...(report.filters ? { filters: (ctx: ReportCtx, params: P) => report.filters!(contextWithoutJit(ctx), params) } : {}),
  };
}
