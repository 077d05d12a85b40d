/**
 * An export the database writes in several statements (the inventory: one per snapshot) starts
 * each statement while the one before it streams, on another pooled connection, so that its work
 * before its first row overlaps the transfer; an export abandoned half-way leaves no statement
 * running. Real Postgres (PGlite has no COPY TO STDOUT stream): skipped without TEST_DATABASE_URL.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import type { PresentedColumn } from '../../src/present/column.js';
import { streamCsv } from '../../src/present/csv.js';
import type { ExportSql } from '../../src/present/csv-sql.js';
import { testDatabases } from '../helpers/databases.js';

const postgres = testDatabases().filter((d) => d.name === 'postgres');

const COLUMNS: PresentedColumn[] = [{ key: 'n', label: 'N', kind: 'int' }];

/** Statements tagged by a comment, so that pg_stat_activity tells them apart. */
function exportOf(db: Database, statements: string[]): ExportSql {
  return {
    queries: () => statements.map((text) => ({ text, values: [] })),
    csvCopy: db.csvCopy!,
  };
}

async function runningTagged(db: Database, tag: string): Promise<number> {
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state = 'active' and query like $1`,
    [`%${tag}%`],
  );
  return row!.n;
}

/** Resolves once `check` holds, polling every 25 ms; rejects after 5 s naming what it waited for. */
function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  return vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: 5_000, interval: 25 },
  );
}

describe.runIf(postgres.length > 0)('an export written by the database in several statements', () => {
  let db: Database;
  beforeAll(async () => {
    db = await postgres[0]!.open({ migrate: false });
  });
  afterAll(async () => {
    await db?.close();
  });

  it('starts the next statement while the first streams, and writes their rows in order', async () => {
    const tag = `ahead_${Date.now()}`;
    const statements = [
      `select g as n from generate_series(1, 3) g /* ${tag}_first */`,
      // Sleeps before its rows: seen running while the first statement's rows are still held.
      `select g as n from (select pg_sleep(0.3)) s, generate_series(4, 6) g /* ${tag}_second */`,
    ];
    const parts: string[] = [];
    let secondRanWhileFirstHeld = false;
    // Nothing buffered ahead of the held piece: the export is pulled only as the socket takes it.
    const out = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, done) {
        parts.push(chunk.toString());
        // The first piece (the header and the first statement's rows) is held until the second
        // statement is seen running: it has started before the first one was read whole.
        if (parts.length > 1) return done();
        waitFor('the second statement to run', async () => (await runningTagged(db, `${tag}_second`)) > 0).then(
          () => {
            secondRanWhileFirstHeld = true;
            done();
          },
          (err: unknown) => done(err as Error),
        );
      },
    });
    await streamCsv(out, COLUMNS, (async function* () {})(), { sql: exportOf(db, statements) });
    expect(secondRanWhileFirstHeld).toBe(true);
    expect(parts.join('')).toBe('\uFEFFN\r\n1\r\n2\r\n3\r\n4\r\n5\r\n6\r\n');
  });

  it('ends the statement started ahead when the export is abandoned', async () => {
    const tag = `abandoned_${Date.now()}`;
    const statements = [
      `select g as n from generate_series(1, 200000) g /* ${tag}_first */`,
      `select g as n from generate_series(1, 5000000) g /* ${tag}_second */`,
    ];
    let pieces = 0;
    let secondRan = false;
    const out = new Writable({
      highWaterMark: 1,
      write(_chunk: Buffer, _encoding, done) {
        pieces++;
        // The client goes away once the second statement is running.
        if (pieces === 1) {
          waitFor('the second statement to run', async () => (await runningTagged(db, `${tag}_second`)) > 0).then(
            () => {
              secondRan = true;
              done(new Error('client gone'));
            },
            (err: unknown) => done(err as Error),
          );
          return;
        }
        done();
      },
    });
    await expect(streamCsv(out, COLUMNS, (async function* () {})(), { sql: exportOf(db, statements) })).rejects.toThrow();
    expect([pieces, secondRan]).toEqual([1, true]);
    await waitFor('no statement of the export to run', async () => (await runningTagged(db, tag)) === 0);
    // The pool still answers (the connections of both statements were given back or dropped).
    expect(await db.query<{ one: number }>('select 1 as one')).toEqual([{ one: 1 }]);
  });
});
