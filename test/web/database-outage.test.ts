/**
 * The service (startService: simulator, collection, web app) on a private Postgres cluster that
 * the test stops and starts under load (test/helpers/private-postgres.ts): while it is down,
 * pages, JSON and "Collect now" answer 503 with Retry-After and `database_unavailable`, never 500
 * and never a dropped request; once it is back they answer 200. A large CSV export whose database
 * stops half-way ends with `# export incomplete: the database connection was lost after N rows`
 * after its last whole row, and the transfer fails; both writers: Postgres's COPY (instances) and
 * rows written in Node from a cursor (ports).
 *
 * Skipped, with the reason printed, where a private cluster cannot be made (no postgresql-common,
 * not root). `.ci/run` runs it.
 */
import pg from 'pg';
import { Client, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { DATABASE_RETRY_AFTER_SECONDS } from '../../src/web/errors.js';
import { Jar } from '../helpers/cookies.js';
import { createPrivateCluster, privatePostgresUnavailable, type PrivateCluster } from '../helpers/private-postgres.js';
import { parseCsv } from './fixtures.js';
import { downloadWhole } from '../helpers/download.js';

const skipReason = privatePostgresUnavailable();
if (skipReason) console.warn(`test/web/database-outage.test.ts skipped: ${skipReason}`);

/** Each collected instance (and its ports) is copied this many times: CSV files of ~20 MB each. */
const COPIES = 300;
const RETRY_AFTER = String(DATABASE_RETRY_AFTER_SECONDS);

describe.skipIf(skipReason !== null)('a database outage: the private Postgres cluster stopped and started under load', () => {
  let cluster: PrivateCluster;
  let service: RunningService;
  const rows = { instances: 0, ports: 0 };

  beforeAll(async () => {
    cluster = await createPrivateCluster();
    await withClient(cluster.url(), (c) => c.query('CREATE DATABASE cloudtally'));
    const config = loadConfig({ DATABASE_URL: cluster.url('cloudtally'), PORT: '0', SIM_SIZE: '300', SIM_TASK_DELAY_MS: '20', LOG_LEVEL: 'silent' });
    service = await startService(config, silentLogger(), { demoHistoryDays: 0 });
    await service.ready;
    await service.collection.idle();
    // Large exports without collecting 60,000 instances: the current versions of every instance
    // and port, copied under new instance ids (the inventory reads them like collected ones).
    await withClient(cluster.url('cloudtally'), async (c) => {
      for (const table of ['instances_versions', 'instance_ports_versions']) {
        const { rows: cols } = await c.query<{ column_name: string }>(
          "SELECT column_name FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1 ORDER BY ordinal_position",
          [table],
        );
        const names = cols.map((col) => `"${col.column_name}"`);
        const values = cols.map((col) => (col.column_name === 'instance_id' ? `instance_id || '-copy-' || g` : `"${col.column_name}"`));
        await c.query(`INSERT INTO ${table} (${names.join(', ')}) SELECT ${values.join(', ')} FROM ${table}, generate_series(1, ${COPIES}) g WHERE valid_to IS NULL`);
      }
      await c.query('ANALYZE');
    });
    // Not by downloading them: a connection that has carried a large file at full speed has grown
    // its socket buffers, which could then hold a whole export.
    await withClient(cluster.url('cloudtally'), async (c) => {
      for (const [kind, table] of [['instances', 'instances_versions'], ['ports', 'instance_ports_versions']] as const) {
        const { rows: counted } = await c.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE valid_to IS NULL`);
        rows[kind] = counted[0]!.n;
      }
    });
  }, 300_000);

  afterAll(async () => {
    if (cluster && !(await cluster.running())) await cluster.start().catch(() => undefined);
    await service?.stop().catch(() => undefined);
    await cluster?.drop();
  }, 120_000);

  const download = (path: string) => downloadWhole(`${service.url}${path}`);

  async function get(path: string, headers: Record<string, string> = {}) {
    const res = await request(`${service.url}${path}`, { headers });
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], type: String(res.headers['content-type']), body: await res.body.text() };
  }

  /**
   * Starts an export, stops reading once it has begun (so the server stops pulling rows: the
   * export is half-way), waits until `stalled` says the database side is waiting for it, stops
   * the cluster, then reads on to the end.
   */
  async function exportCutByOutage(path: string, stalled: (activity: Activity[]) => boolean) {
    // A connection of its own (see beforeAll): its buffers are the kernel's defaults.
    const client = new Client(service.url);
    const res = await client.request({ method: 'GET', path });
    expect(res.statusCode).toBe(200);
    const reader = res.body[Symbol.asyncIterator]();
    const parts: Buffer[] = [];
    const first = await reader.next();
    parts.push(first.value as Buffer);
    const deadline = Date.now() + 20_000;
    let activity: Activity[] = [];
    while (!stalled((activity = await exportActivity(cluster)))) {
      if (Date.now() > deadline) throw new Error(`the export never waited on its reader: ${JSON.stringify(activity)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await cluster.stop();
    let error: unknown = null;
    try {
      for (let next = await reader.next(); !next.done; next = await reader.next()) parts.push(next.value as Buffer);
    } catch (err) {
      error = err;
    }
    await cluster.start();
    await client.close().catch(() => undefined);
    return { text: Buffer.concat(parts).toString('utf8'), error };
  }

  function expectCutCleanly(kind: 'instances' | 'ports', text: string, error: unknown) {
    // The client sees a failed transfer: the chunked body never ends cleanly.
    expect(error).toBeInstanceOf(Error);
    const match = /\r\n# export incomplete: the database connection was lost after (\d+) rows\r\n$/.exec(text);
    expect(match, text.slice(-300)).not.toBeNull();
    const reported = Number(match![1]);
    const before = text.slice(0, match!.index + 2);
    const records = dataRows(before);
    // Every row before the line is whole (as many cells as the header), and the line counts them.
    const width = parseCsv(before.replace(/^\uFEFF/, ''))[0]!.length;
    expect(records.filter((r) => r.length !== width)).toEqual([]);
    expect(records.length).toBe(reported);
    console.info(`${kind} CSV cut by the outage after ${reported} of ${rows[kind]} rows`);
    expect(reported).toBeGreaterThan(0);
    expect(reported).toBeLessThan(rows[kind]);
  }

  it('ends a CSV export written by Postgres (COPY) with the incomplete line when its database stops half-way', async () => {
    const { text, error } = await exportCutByOutage('/api/reports/inventory.csv?kind=instances', (activity) =>
      // COPY is still writing rows, waiting for the socket that the paused download keeps full.
      activity.some((a) => a.query.startsWith('COPY (') && a.wait_event === 'ClientWrite'),
    );
    expectCutCleanly('instances', text, error);
    // After the restart the same export is whole again.
    const whole = await download('/api/reports/inventory.csv?kind=instances');
    expect(whole.error).toBeNull();
    // Every instance, then the totals per currency.
    expect(dataRows(whole.text).filter((r) => r[0] !== 'Total').length).toBe(rows.instances);
    expect(whole.text.length).toBeGreaterThan(12_000_000);
    expect(whole.text).not.toContain('# export incomplete');
  }, 120_000);

  it('ends a CSV export written in Node from a cursor with the incomplete line when its database stops half-way', async () => {
    const { text, error } = await exportCutByOutage('/api/reports/inventory.csv?kind=ports', (activity) =>
      // The cursor is open between two FETCHes: the next one waits for the paused download.
      activity.some((a) => a.state === 'idle in transaction' && a.query.startsWith('FETCH')),
    );
    expectCutCleanly('ports', text, error);
    const whole = await download('/api/reports/inventory.csv?kind=ports');
    expect(whole.error).toBeNull();
    expect(dataRows(whole.text).length).toBe(rows.ports);
    expect(whole.text.length).toBeGreaterThan(12_000_000);
  }, 120_000);

  // Last: its "Collect now" runs a collection, which ends the copied instances' versions (the
  // simulator has no such instances), so the exports above would be small again.
  it('answers 503 with Retry-After while it is down (pages, JSON, Collect now), never 500, and 200 once it is back', async () => {
    // A CSRF token for "Collect now", taken while the database is up (local-only mode: everyone is admin).
    const jar = new Jar();
    const home = await request(`${service.url}/reports/inventory`);
    jar.take(home.headers['set-cookie']);
    const token = /name="_csrf" value="([^"]+)"/.exec(await home.body.text())![1]!;
    const collect = (accept: string) =>
      request(`${service.url}/actions/collect`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept, ...jar.header() },
        body: new URLSearchParams({ _csrf: token, return_to: '/reports/inventory' }).toString(),
      });

    const load = startLoad(service.url, ['/reports/overview', '/api/reports/overview', '/api/reports/cost?by=tag:team', '/reports/inventory?kind=instances', '/api/reports/inventory?kind=ports&limit=50', '/reports/collection-health']);
    await load.until(() => load.answers.length >= 20);
    await cluster.stop();

    const page = await get('/reports/overview');
    expect([page.status, page.retryAfter]).toEqual([503, RETRY_AFTER]);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.body).toContain('<h1>Database unavailable</h1>');
    expect(page.body).toContain('The database is not available right now (it may be restarting)');
    const json = await get('/api/reports/cost?by=tag:team');
    expect([json.status, json.retryAfter]).toEqual([503, RETRY_AFTER]);
    expect(JSON.parse(json.body)).toMatchObject({ code: 'database_unavailable', message: expect.stringContaining(`try again in ${RETRY_AFTER} seconds`) });
    const csv = await get('/api/reports/inventory.csv?kind=instances');
    expect([csv.status, csv.retryAfter, JSON.parse(csv.body).code]).toEqual([503, RETRY_AFTER, 'database_unavailable']);
    const collectJson = await collect('application/json');
    expect([collectJson.statusCode, collectJson.headers['retry-after']]).toEqual([503, RETRY_AFTER]);
    expect(((await collectJson.body.json()) as { code: string }).code).toBe('database_unavailable');
    const collectForm = await collect('text/html');
    expect([collectForm.statusCode, collectForm.headers['retry-after']]).toEqual([503, RETRY_AFTER]);
    expect(await collectForm.body.text()).toContain('<h1>Database unavailable</h1>');
    const ready = await get('/readyz');
    expect(ready.status).toBe(503);

    const whileDown = load.answers.length;
    await load.until(() => load.answers.length >= whileDown + 20);
    await cluster.start();
    // Back: every page answers again, from new connections (the pool dropped the dead ones).
    await load.until(() => load.answers.slice(-12).every((a) => a.status === 200), 30_000);
    for (const path of ['/reports/overview', '/api/reports/cost?by=tag:team', '/reports/inventory?kind=instances']) expect((await get(path)).status, path).toBe(200);
    let collected = await collect('application/json');
    if (collected.statusCode === 409) {
      // The hourly schedule's slot (at :00) may have started a run as the database came back: the
      // answer names it, and once it has ended "Collect now" starts one of its own.
      expect(((await collected.body.json()) as { run_id: unknown }).run_id).toEqual(expect.any(Number));
      await service.collection.idle();
      collected = await collect('application/json');
    }
    expect(collected.statusCode).toBe(202);
    await collected.body.dump();
    await service.collection.idle();
    const answers = await load.stop();

    // Under load: every request was answered, 200 or 503 (with Retry-After and the code), none 500.
    expect(answers.filter((a) => a.status === null)).toEqual([]);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 503)).toEqual([]);
    const unavailable = answers.filter((a) => a.status === 503);
    expect(unavailable.length).toBeGreaterThanOrEqual(20);
    expect(unavailable.filter((a) => a.retryAfter !== RETRY_AFTER)).toEqual([]);
    expect(unavailable.filter((a) => a.path.startsWith('/api/') && a.code !== 'database_unavailable')).toEqual([]);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThanOrEqual(30);
  }, 120_000);
});

interface Activity {
  state: string;
  wait_event: string | null;
  query: string;
}

/** What the service's connections to the cluster are doing (read on a connection of its own). */
async function exportActivity(cluster: PrivateCluster): Promise<Activity[]> {
  return withClient(cluster.url(), async (c) => {
    const { rows } = await c.query<Activity>(
      `SELECT state, wait_event, left(query, 40) AS query FROM pg_stat_activity WHERE datname = 'cloudtally' AND application_name LIKE 'cloudtally %'`,
    );
    return rows;
  });
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The data rows of a CSV export: every record after the header, without the file's BOM. */
function dataRows(text: string): string[][] {
  return parseCsv(text.replace(/^\uFEFF/, '')).slice(1);
}

interface Answer {
  path: string;
  status: number | null;
  retryAfter?: string;
  code?: string;
  error?: string;
}

/** Four clients asking for `paths` in turn, as fast as they are answered, until stopped. */
function startLoad(base: string, paths: readonly string[]) {
  const answers: Answer[] = [];
  let running = true;
  const worker = async (offset: number) => {
    for (let i = offset; running; i++) {
      const path = paths[i % paths.length]!;
      try {
        const res = await request(`${base}${path}`, { headers: { accept: path.startsWith('/api/') ? 'application/json' : 'text/html' } });
        const body = await res.body.text();
        const code = res.headers['content-type']?.toString().startsWith('application/json') ? (JSON.parse(body) as { code?: string }).code : undefined;
        answers.push({ path, status: res.statusCode, retryAfter: res.headers['retry-after'] as string | undefined, ...(code ? { code } : {}) });
      } catch (err) {
        answers.push({ path, status: null, error: (err as Error).message });
      }
    }
  };
  const workers = [0, 1, 2, 3].map((n) => worker(n));
  return {
    answers,
    async until(done: () => boolean, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!done()) {
        if (Date.now() > deadline) throw new Error(`load: condition not met within ${timeoutMs} ms; last answers ${JSON.stringify(answers.slice(-6))}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      running = false;
      await Promise.all(workers);
      return answers;
    },
  };
}
