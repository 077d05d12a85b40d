/**
 * Bound values written into SQL text, for the one statement that takes no parameters and still
 * needs them: `COPY (query) TO STDOUT`. Quoting is pg's own escapeLiteral (doubles quotes, and
 * backslashes in an E'' literal), so a value can never end its literal; every placeholder of the
 * queries inlined this way is followed by a cast (`$1::int[]`), which gives the literal its type.
 */
import pg from 'pg';

/** A flat array as Postgres array text: every element quoted, `"` and `\` escaped, null as NULL. */
function arrayText(values: readonly unknown[]): string {
  const element = (value: unknown): string => {
    if (value === null || value === undefined) return 'NULL';
    if (Array.isArray(value) || (typeof value === 'object' && !(value instanceof Date))) {
      throw new Error('sqlLiteral: only flat arrays of scalars can be inlined');
    }
    return `"${scalarText(value).replace(/["\\]/g, (c) => `\\${c}`)}"`;
  };
  return `{${values.map(element).join(',')}}`;
}

function scalarText(value: unknown): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new Error('sqlLiteral: an invalid Date cannot be inlined');
    return value.toISOString();
  }
  if (typeof value === 'number' && !Number.isFinite(value)) throw new Error(`sqlLiteral: ${value} cannot be inlined`);
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  throw new Error(`sqlLiteral: a value of type ${typeof value} cannot be inlined`);
}

/** A bound value as an SQL literal (the text pg would have sent for it, quoted). */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  return pg.escapeLiteral(Array.isArray(value) ? arrayText(value) : scalarText(value));
}

/**
 * The query with its `$n` placeholders replaced by literals of `values`. Only for SQL written by
 * code, whose text holds `$n` nowhere but as a placeholder.
 */
export function inlineParams(sql: string, values: readonly unknown[]): string {
  return sql.replace(/\$(\d+)\b/g, (_match, n: string) => {
    const index = Number(n) - 1;
    if (index < 0 || index >= values.length) throw new Error(`inlineParams: $${n} has no value (${values.length} given)`);
    return sqlLiteral(values[index]);
  });
}

/** A double-quoted SQL identifier (`"` doubled), for names that cannot be bound as parameters. */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
