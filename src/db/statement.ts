/**
 * Statements written with drizzle-orm's `sql` template: values stand where they are used
 * (`${fromDay}::date`) and are still bound as parameters, fragments nest (`${piecesCte(...)}`) and
 * are numbered when the statement is rendered, so a query built from several parts never counts
 * `$n` by hand. Code text goes in with `sql.raw` (never user input).
 */
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Queryable, Row } from './connection.js';

export { sql, type SQL };

const dialect = new PgDialect();

/** The statement as text with `$n` placeholders and its parameters. */
export function toQuery(statement: SQL): { text: string; params: unknown[] } {
  const { sql: text, params } = dialect.sqlToQuery(statement);
  return { text, params };
}

/** The rows of `statement`. */
export function queryRows<R extends Row>(q: Queryable, statement: SQL): Promise<R[]> {
  const { text, params } = toQuery(statement);
  return q.query<R>(text, params);
}

/** Runs `statement`; returns its rows and the number of rows affected. */
export function executeStatement<R extends Row = Row>(q: Queryable, statement: SQL): Promise<{ rows: R[]; rowCount: number }> {
  const { text, params } = toQuery(statement);
  return q.execute<R>(text, params);
}

/** An array bound as one parameter (an array written as `${values}` would become a list of parameters). */
export function arrayParam(values: readonly unknown[]): SQL {
  return sql`${sql.param(values)}`;
}
