/**
 * Identity and serial sequences of tables placed on Citus, set past the rows the table holds.
 * Distributing a table that already holds rows can leave its sequence behind them (seen:
 * `create_reference_table('snapshots')` restarted snapshots_id_seq at 1, and every snapshot
 * insert then failed on snapshots_pkey), so after distribution each sequence whose next value
 * is not above the table's max is moved to it. A sequence already past the max is left alone.
 */
import type { Queryable } from './connection.js';
import { quoteIdent } from './sql-literal.js';

export interface SequenceFix {
  table: string;
  column: string;
  sequence: string;
  /** The value nextval would have returned before the fix. */
  before: string;
  /** The value nextval returns after it (the table's max + 1). */
  after: string;
}

export async function fixIdentitySequences(session: Queryable, tables: readonly string[]): Promise<SequenceFix[]> {
  const columns = await session.query<{ table: string; column: string; sequence: string }>(
    `select c.relname as table, a.attname as column, pg_get_serial_sequence(format('%I', c.relname), a.attname) as sequence
     from pg_class c join pg_attribute a on a.attrelid = c.oid
     where c.relnamespace = 'public'::regnamespace and c.relname = any($1::text[])
       and a.attnum > 0 and not a.attisdropped
       and pg_get_serial_sequence(format('%I', c.relname), a.attname) is not null
     order by 1, 2`,
    [tables],
  );
  const fixes: SequenceFix[] = [];
  for (const { table, column, sequence } of columns) {
    // Max and next value as text: both may pass 2^53.
    const [state] = await session.query<{ max: string | null; next: string }>(
      `select (select max(${quoteIdent(column)})::text from ${quoteIdent(table)}) as max,
              (select (case when is_called then last_value + 1 else last_value end)::text from ${sequence}) as next`,
    );
    if (state!.max === null || BigInt(state!.max) < BigInt(state!.next)) continue;
    await session.query(`select setval($1::regclass, $2::bigint, true)`, [sequence, state!.max]);
    fixes.push({ table, column, sequence, before: state!.next, after: (BigInt(state!.max) + 1n).toString() });
  }
  return fixes;
}
