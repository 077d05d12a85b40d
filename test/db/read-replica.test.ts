/**
 * DATABASE_READ_URL: reports read a real streaming replica (a private cluster made by
 * `pg_basebackup -R` of a private primary) once it shows the primary's data version, and the
 * primary while it does not: replay paused, the replica stopped; and the replica again after.
 * A replica that is behind costs no per-request wait: its position is looked at once per data
 * version, and again at most once per recheck interval while it is behind.
 * Needs root and postgresql-common (as .ci/run has); PGlite has no replicas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { request } from 'undici';
import { ConfigError, describeConfig, loadConfig } from '../../src/config/index.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { createPrivateCluster, createStreamingReplica, privatePostgresUnavailable, type PrivateCluster } from '../helpers/private-postgres.js';

async function sql<T = Record<string, unknown>>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as T[];
  } finally {
    await client.end();
  }
}

async function getJson(service: RunningService, path: string): Promise<{ status: number; body: any }> {
  const res = await request(`${service.url}${path}`);
  const text = await res.body.text();
  return { status: res.statusCode, body: res.headers['content-type']?.toString().includes('json') ? JSON.parse(text) : text };
}

async function metric(service: RunningService, prefix: string): Promise<number> {
  const res = await request(`${service.url}/metrics`);
  const text = await res.body.text();
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.split(' ').pop()) : 0;
}

const reads = (service: RunningService, target: string, reason: string) =>
  metric(service, `cloudtally_report_reads_total{target="${target}",reason="${reason}"}`);
const checks = (service: RunningService) => metric(service, 'cloudtally_read_replica_checks_total ');

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('configuration', () => {
  it('refuses DATABASE_READ_URL without a Postgres primary', () => {
    expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://reader@db-replica:5432/cloudtally' })).toThrow(ConfigError);
    expect(() => loadConfig({ DATABASE_READ_URL: 'postgres://reader@db-replica:5432/cloudtally' })).toThrow(/DATABASE_READ_URL.*needs DATABASE_URL/);
  });
  it('never shows the replica password in the logged configuration', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://a@h/db', DATABASE_READ_URL: 'postgres://reader:s3cret-pw@replica:5432/db' });
    expect(config.databaseReadUrl).toBe('postgres://reader:s3cret-pw@replica:5432/db');
    expect(JSON.stringify(describeConfig(config))).not.toContain('s3cret-pw');
  });
  it('refuses a read URL that is not a Postgres URL', () => {
    expect(() => loadConfig({ DATABASE_URL: 'postgres://a@h/db', DATABASE_READ_URL: 'mysql://h/db' })).toThrow(/DATABASE_READ_URL/);
  });
});

const unavailable = privatePostgresUnavailable();

describe.skipIf(unavailable !== null)(`reports on a real streaming replica${unavailable ? ` (skipped: ${unavailable})` : ''}`, () => {
  // Long enough that requests made back to back fall inside one interval.
  const RECHECK_MS = 2_000;
  let primary: PrivateCluster;
  let replica: PrivateCluster;
  let service: RunningService;
  let variant = 0;
  const SORTS = ['group', 'currency', 'cost', 'previous_cost', 'change_percent', 'price_per_hour', 'price_per_month', 'share', 'resources', 'unpriced'];

  /** A cost report no earlier request asked for (so the report cache cannot answer it). */
  async function freshReport(): Promise<{ status: number; body: any }> {
    const n = variant++;
    return getJson(service, `/api/reports/cost?by=project&sort=${SORTS[n % SORTS.length]}&dir=${Math.floor(n / SORTS.length) % 2 ? 'asc' : 'desc'}&limit=${10 + Math.floor(n / (2 * SORTS.length))}`);
  }

  async function caughtUp(): Promise<void> {
    const [{ lsn }] = await sql<{ lsn: string }>(primary.url(), 'select pg_current_wal_lsn()::text as lsn');
    for (let i = 0; i < 300; i++) {
      const [row] = await sql<{ ok: boolean }>(replica.url(), `select pg_wal_lsn_diff(pg_last_wal_replay_lsn(), '${lsn}') >= 0 as ok`);
      if (row?.ok) return;
      await pause(100);
    }
    throw new Error(`the replica did not replay up to ${lsn} within 30 s`);
  }

  const runs = async (url: string) => Number((await sql<{ n: string }>(url, 'select count(*) as n from collection_runs'))[0]!.n);

  async function collect(): Promise<void> {
    await service.collection.collectNow('manual');
    await service.collection.idle();
  }

  /** Asks fresh reports until one is read on the replica; false when none was within `tries`. */
  async function backOnReplica(tries: number): Promise<boolean> {
    const before = await reads(service, 'replica', 'current');
    for (let i = 0; i < tries; i++) {
      expect((await freshReport()).status).toBe(200);
      if ((await reads(service, 'replica', 'current')) > before) return true;
      await pause(200);
    }
    return false;
  }

  beforeAll(async () => {
    primary = await createPrivateCluster();
    await sql(primary.url(), 'CREATE DATABASE cloudtally');
    replica = await createStreamingReplica(primary);
    service = await startService(
      loadConfig({ DATABASE_URL: primary.url('cloudtally'), DATABASE_READ_URL: replica.url('cloudtally'), PORT: '0', SIM_TASK_DELAY_MS: '20' }),
      silentLogger(),
      { demoHistoryDays: 0, replicaRecheckMs: RECHECK_MS },
    );
    await service.ready;
    await service.collection.idle();
  }, 240_000);

  afterAll(async () => {
    await service?.stop();
    await replica?.drop();
    await primary?.drop();
  });

  it('is a real replica: read-only, and it replays what the primary writes', async () => {
    await expect(sql(replica.url('cloudtally'), 'DELETE FROM snapshots')).rejects.toThrow(/read-only transaction/);
    await caughtUp();
    expect(await runs(replica.url('cloudtally'))).toBe(await runs(primary.url('cloudtally')));
    expect(await runs(primary.url('cloudtally'))).toBeGreaterThan(0);
  });

  it('serves reports and exports from the replica once it shows the data version, looking at it once per version', async () => {
    await collect();
    await caughtUp();
    // Reports warmed right after the collection may have found the replica a few ms behind: the
    // next look, at most one recheck interval later, finds it current.
    await pause(RECHECK_MS);
    expect(await backOnReplica(30)).toBe(true);
    const [looksBefore, currentBefore] = [await checks(service), await reads(service, 'replica', 'current')];
    for (let i = 0; i < 6; i++) {
      const res = await freshReport();
      expect(res.status).toBe(200);
      expect(res.body.rows.length).toBeGreaterThan(0);
    }
    expect(await reads(service, 'replica', 'current')).toBeGreaterThanOrEqual(currentBefore + 6);
    // A replica that has shown a version is not looked at again for it, however many reports read it.
    expect(await checks(service)).toBe(looksBefore);
    // An export is never cached: it is routed afresh, to the replica too.
    const beforeExport = await reads(service, 'replica', 'current');
    const csv = await request(`${service.url}/api/reports/cost.csv?by=project`);
    expect(csv.statusCode).toBe(200);
    expect((await csv.body.text()).trim().split('\n').length).toBeGreaterThan(2);
    expect(await reads(service, 'replica', 'current')).toBeGreaterThan(beforeExport);
  });

  it('reads the primary at once while replay is paused, without a look per request, and the replica again once it resumes', async () => {
    await sql(replica.url(), 'select pg_wal_replay_pause()');
    try {
      await collect();
      // The replica really is behind: it has not replayed the new run.
      expect(await runs(replica.url('cloudtally'))).toBeLessThan(await runs(primary.url('cloudtally')));
      const [looksBefore, behindBefore] = [await checks(service), await reads(service, 'primary', 'behind')];
      const started = Date.now();
      for (let i = 0; i < 8; i++) {
        const res = await freshReport();
        expect(res.status).toBe(200);
        expect(res.body.rows.length).toBeGreaterThan(0);
      }
      const elapsed = Date.now() - started;
      expect(await reads(service, 'primary', 'behind')).toBeGreaterThanOrEqual(behindBefore + 8);
      // The first request looked; later ones look again (in the background) once per recheck interval at most.
      expect(await checks(service)).toBeLessThanOrEqual(looksBefore + 1 + Math.ceil(elapsed / RECHECK_MS));
      expect(await checks(service)).toBeLessThan(looksBefore + 8);
    } finally {
      await sql(replica.url(), 'select pg_wal_replay_resume()');
    }
    await caughtUp();
    await pause(RECHECK_MS);
    expect(await backOnReplica(30)).toBe(true);
  });

  it('reads the primary while the replica is down, and the replica again once it is back', async () => {
    await replica.stop('fast');
    try {
      const errorsBefore = await reads(service, 'primary', 'error');
      for (let i = 0; i < 3; i++) {
        const res = await freshReport();
        expect(res.status).toBe(200);
        expect(res.body.rows.length).toBeGreaterThan(0);
      }
      expect(await reads(service, 'primary', 'error')).toBeGreaterThanOrEqual(errorsBefore + 3);
    } finally {
      await replica.start();
    }
    await caughtUp();
    await pause(RECHECK_MS);
    expect(await backOnReplica(30)).toBe(true);
  });
});
