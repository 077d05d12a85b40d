/**
 * A database that is down or restarting, as the web layer sees it: the errors pg, pg-pool, PGlite
 * and drizzle throw then are answered 503 with Retry-After and `database_unavailable` (pages, JSON,
 * CSV before its first byte, "Collect now"); every other error stays a 500. A CSV export whose
 * rows fail after its first byte ends with a line saying it is incomplete, after its last whole
 * row, and the transfer is cut. The real outage (a private Postgres cluster stopped under load)
 * is test/web/database-outage.test.ts.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { PGlite } from '@electric-sql/pglite';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { withCrlf } from '../../src/present/csv-sql.js';
import { INCOMPLETE_EXPORT_LINE, streamCsv } from '../../src/present/csv.js';
import type { ReportDefinition, Row } from '../../src/reports/report.js';
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../../src/web/errors.js';
import { Jar } from '../helpers/cookies.js';
import { startTestServer, type TestServer } from './fixtures.js';
import { downloadWhole } from '../helpers/download.js';

function pgError(code: string, message: string): Error {
  const err = new pg.DatabaseError(message, message.length, 'error');
  err.code = code;
  return err;
}
function systemError(code: string, syscall = 'connect'): Error {
  return Object.assign(new Error(`${syscall} ${code} 127.0.0.1:5432`), { code, syscall, errno: -111, address: '127.0.0.1', port: 5432 });
}

/** What each failure throws, by name: the outage's errors, and ordinary errors that stay 500. */
const FAILURES: Record<string, () => Error> = {
  refused: () => systemError('ECONNREFUSED'),
  reset: () => systemError('ECONNRESET', 'read'),
  socketGone: () => systemError('ENOENT'),
  terminated: () => new Error('Connection terminated unexpectedly'),
  connectTimeout: () => new Error('timeout exceeded when trying to connect'),
  adminShutdown: () => pgError('57P01', 'terminating connection due to administrator command'),
  crashShutdown: () => pgError('57P02', 'terminating connection because of crash of another server process'),
  cannotConnectNow: () => pgError('57P03', 'the database system is shutting down'),
  tooManyConnections: () => pgError('53300', 'sorry, too many clients already'),
  pgliteClosed: () => new Error('PGlite is closed'),
  poolEnded: () => new Error('Cannot use a pool after calling end on the pool'),
  drizzleWrapped: () => new DrizzleQueryError('select 1', [], pgError('57P01', 'terminating connection due to administrator command')),
  rollbackFailed: () => new AggregateError([pgError('57P01', 'terminating connection'), new Error('Connection terminated')], 'transaction failed, and so did its rollback'),
  // Not an outage: these stay 500.
  syntax: () => pgError('42601', 'syntax error at or near "selec"'),
  protocol: () => pgError('08P01', 'invalid message format'),
  missingFile: () => systemError('ENOENT', 'open'),
  plain: () => new Error('database exploded at /secret/path'),
};
const OUTAGES = ['refused', 'reset', 'socketGone', 'terminated', 'connectTimeout', 'adminShutdown', 'crashShutdown', 'cannotConnectNow', 'tooManyConnections', 'pgliteClosed', 'poolEnded', 'drizzleWrapped', 'rollbackFailed'];
const NOT_OUTAGES = ['syntax', 'protocol', 'missingFile', 'plain'];

const failureParams = z.strictObject({ fail: z.enum(Object.keys(FAILURES) as [string, ...string[]]), after: z.coerce.number().int().min(0).optional() });

/** Fails with `fail` (before any row, or after `after` rows of the export). */
const outageReport: ReportDefinition<z.infer<typeof failureParams>> = {
  name: 'outage',
  title: 'Outage',
  description: 'Throws what a database outage throws.',
  section: 'health',
  params: failureParams,
  async run(_ctx, params) {
    throw FAILURES[params.fail]!();
  },
  async export(_ctx, params) {
    if (params.after === undefined) throw FAILURES[params.fail]!();
    const after = params.after;
    return {
      columns: [
        { key: 'n', label: 'N', kind: 'int' },
        { key: 'text', label: 'Text', kind: 'text' },
      ],
      rows: (async function* () {
        for (let n = 1; n <= after; n++) yield { n, text: `row ${n} `.padEnd(100, 'x') };
        throw FAILURES[params.fail]!();
      })(),
    };
  },
};

let server: TestServer;
let collectFailure: Error | null = null;

beforeAll(async () => {
  server = await startTestServer({
    reports: [outageReport],
    collectNow: async () => {
      if (collectFailure) throw collectFailure;
      return { runId: 7, status: 'running' };
    },
  });
});
afterAll(async () => {
  await server.close();
});

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await request(`${server.url}${path}`, { headers });
  return { status: res.statusCode, headers: res.headers, body: await res.body.text() };
}

describe('classifying errors', () => {
  it('takes the errors of a database that is down or restarting for an outage, and nothing else', () => {
    for (const name of OUTAGES) expect(isDatabaseUnavailable(FAILURES[name]!()), name).toBe(true);
    for (const name of NOT_OUTAGES) expect(isDatabaseUnavailable(FAILURES[name]!()), name).toBe(false);
    expect(isDatabaseUnavailable('ECONNREFUSED')).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });

  it('recognises what pg and PGlite really throw: a refused connection, a closed PGlite', async () => {
    // A port nobody listens on.
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const pool = new pg.Pool({ connectionString: `postgres://nobody@127.0.0.1:${port}/none` });
    const refused = await pool.query('select 1').catch((err: unknown) => err);
    await pool.end();
    expect(isDatabaseUnavailable(refused)).toBe(true);

    const lite = await PGlite.create('memory://');
    await lite.close();
    const closed = await lite.query('select 1').catch((err: unknown) => err);
    expect(isDatabaseUnavailable(closed)).toBe(true);
  });

  it('matches messages that pg and pg-pool still throw (they have no codes)', () => {
    const require = createRequire(import.meta.url);
    const sources = ['pg/lib/client.js', 'pg-pool'].map((m) => readFileSync(require.resolve(m), 'utf8')).join('\n');
    for (const message of [
      'Connection terminated unexpectedly',
      'Connection terminated due to connection timeout',
      'timeout exceeded when trying to connect',
      'Client has encountered a connection error and is not queryable',
      'Client was closed and is not queryable',
      'Cannot use a pool after calling end on the pool',
    ]) {
      expect(sources, message).toContain(`'${message}'`);
      expect(isDatabaseUnavailable(new Error(message)), message).toBe(true);
    }
  });
});

describe('answers while the database is unavailable', () => {
  it('answers JSON 503 with Retry-After and database_unavailable, for each way it shows', async () => {
    for (const name of OUTAGES) {
      const res = await get(`/api/reports/outage?fail=${name}`, { 'x-request-id': `req-${name}` });
      expect(res.status, name).toBe(503);
      expect(res.headers['retry-after'], name).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
      expect(JSON.parse(res.body), name).toEqual({
        code: 'database_unavailable',
        message: `The database is not available right now (it may be restarting); try again in ${DATABASE_RETRY_AFTER_SECONDS} seconds.`,
        request_id: `req-${name}`,
      });
    }
    // Logged as a warning with what failed, not as an unexpected error with a stack.
    const line = server.logs.find((l) => l.reqId === 'req-adminShutdown' && l.msg === 'database unavailable');
    expect(line).toMatchObject({ level: 40, err: { code: '57P01', message: 'terminating connection due to administrator command' } });
    expect(server.logs.filter((l) => typeof l.reqId === 'string' && (l.reqId as string).startsWith('req-') && l.msg === 'unexpected error')).toEqual([]);
  });

  it('answers pages 503 with an error page that says so', async () => {
    const res = await get('/reports/outage?fail=refused');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<h1>Database unavailable</h1>');
    expect(res.body).toContain('The database is not available right now (it may be restarting)');
  });

  it('answers a CSV export that fails before its first byte 503 as JSON, not as a file', async () => {
    const res = await get('/api/reports/outage.csv?fail=terminated');
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(JSON.parse(res.body)).toMatchObject({ code: 'database_unavailable' });
  });

  it('keeps every other error a 500 without Retry-After', async () => {
    for (const name of NOT_OUTAGES) {
      const res = await get(`/api/reports/outage?fail=${name}`);
      expect(res.status, name).toBe(500);
      expect(res.headers['retry-after'], name).toBeUndefined();
      expect(JSON.parse(res.body).code, name).toBe('internal_error');
    }
  });

  it('answers "Collect now" 503 (JSON and the form) when the run cannot be recorded', async () => {
    const jar = new Jar();
    const page = await request(`${server.url}/reports/outage?fail=plain`);
    jar.take(page.headers['set-cookie']);
    const token = /name="_csrf" value="([^"]+)"/.exec(await page.body.text())![1]!;
    const post = (accept: string) =>
      request(`${server.url}/actions/collect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept, ...jar.header() },
        body: new URLSearchParams({ _csrf: token, return_to: '/' }).toString(),
      });
    collectFailure = FAILURES.cannotConnectNow!();
    try {
      const json = await post('application/json');
      expect(json.statusCode).toBe(503);
      expect(json.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
      expect(((await json.body.json()) as { code: string }).code).toBe('database_unavailable');
      const form = await post('text/html');
      expect(form.statusCode).toBe(503);
      expect(form.headers['retry-after']).toBe(String(DATABASE_RETRY_AFTER_SECONDS));
      expect(await form.body.text()).toContain('<h1>Database unavailable</h1>');
      // Any other failure of the form still goes back with a message, as before.
      collectFailure = new Error('scheduler stopped');
      const other = await post('text/html');
      await other.body.dump();
      expect(other.statusCode).toBe(303);
    } finally {
      collectFailure = null;
    }
  });
});

const download = (path: string) => downloadWhole(`${server.url}${path}`);

describe('a CSV export that loses its database half-way', () => {
  it('ends with a line saying it is incomplete after its last whole row, and the transfer fails', async () => {
    for (const after of [1, 5, 3000]) {
      const { status, text, error } = await download(`/api/reports/outage.csv?fail=terminated&after=${after}`);
      expect(status).toBe(200);
      // The client sees a failed transfer (no clean end of the chunked body), never a whole file.
      expect(error, `after ${after}`).toBeInstanceOf(Error);
      const lines = text.replace(/^\uFEFF/, '').split('\r\n');
      expect(lines.at(-1)).toBe('');
      expect(lines.at(-2)).toBe(`# export incomplete: the database connection was lost after ${after} row${after === 1 ? '' : 's'}`);
      // Header + every row before it, each whole.
      expect(lines.length).toBe(after + 3);
      expect(lines.slice(1, -2).every((line, i) => line === `${i + 1},${`row ${i + 1} `.padEnd(100, 'x')}`)).toBe(true);
    }
    await new Promise((r) => setTimeout(r, 20));
    expect(server.logs.some((l) => l.msg === 'database unavailable during the response; connection closed')).toBe(true);
  });

  it('says "the export failed" with the request id when the cause is not the database', async () => {
    const res = await request(`${server.url}/api/reports/outage.csv?fail=plain&after=2`, { headers: { 'x-request-id': 'req-csv-plain' } });
    const parts: Buffer[] = [];
    await expect(
      (async () => {
        for await (const chunk of res.body) parts.push(chunk as Buffer);
      })(),
    ).rejects.toThrow();
    expect(Buffer.concat(parts).toString('utf8')).toMatch(/\r\n# export incomplete: the export failed \(request id req-csv-plain\) after 2 rows\r\n$/);
  });
});

describe('streamCsv and withCrlf when the rows fail', () => {
  const columns = [{ key: 'a', label: 'A', kind: 'text' as const }];
  const sink = () => {
    const chunks: Buffer[] = [];
    const out = new Writable({ write: (chunk: Buffer, _enc, done) => (chunks.push(Buffer.from(chunk)), done()) });
    return { out, text: () => Buffer.concat(chunks).toString('utf8') };
  };

  it('writes nothing and throws when the rows fail before the first one', async () => {
    const { out, text } = sink();
    const rows = (async function* (): AsyncGenerator<Row> {
      throw new Error('gone');
    })();
    await expect(streamCsv(out, columns, rows)).rejects.toThrow('gone');
    expect(text()).toBe('');
    expect(out.writableEnded).toBe(false);
  });

  it('leaves the output unended after the incomplete line, and ends a whole export', async () => {
    const failing = sink();
    const rows = (async function* (): AsyncGenerator<Row> {
      yield { a: 'one' };
      yield { a: 'two' };
      throw new Error('gone');
    })();
    await expect(streamCsv(failing.out, columns, rows, { failureReason: () => 'the database connection was lost' })).rejects.toThrow('gone');
    expect(failing.text()).toBe('\uFEFFA\r\none\r\ntwo\r\n# export incomplete: the database connection was lost after 2 rows\r\n');
    expect(failing.out.writableEnded).toBe(false);

    const whole = sink();
    await streamCsv(whole.out, columns, (async function* () {
      yield { a: 'one' };
    })());
    expect(whole.text()).toBe('\uFEFFA\r\none\r\n');
    expect(whole.out.writableEnded).toBe(true);
  });

  it('counts the rows COPY wrote and passes on whole records only, however the pieces are cut', async () => {
    const copied = 'a,"x\ny",1\n"say ""hi""\n, then","",\nlast,z\n';
    for (let cut = 1; cut < copied.length; cut++) {
      const progress = { rows: 0 };
      const out: string[] = [];
      const cutShort = (async function* () {
        yield Buffer.from(copied.slice(0, cut));
        throw new Error('gone');
      })();
      await expect(
        (async () => {
          for await (const piece of withCrlf(cutShort, progress)) out.push(piece.toString());
        })(),
      ).rejects.toThrow('gone');
      // Records ended by an LF outside quotes before the cut: those are the rows passed on.
      const expected = ['a,"x\ny",1\r\n', '"say ""hi""\n, then","",\r\n', 'last,z\r\n'].filter((_, i) => [9, 33, 40][i]! < cut);
      expect(out.join(''), `cut at ${cut}`).toBe(expected.join(''));
      expect(progress.rows, `cut at ${cut}`).toBe(expected.length);
    }
  });

  it('names the marker for programs that read it', () => {
    expect(INCOMPLETE_EXPORT_LINE).toBe('# export incomplete:');
  });
});
