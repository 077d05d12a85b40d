/**
 * DATABASE_READ_URL: reports read a read-only Postgres once it shows the primary's data version,
 * and the primary when it does not. The "replica" here is a login role whose every transaction
 * is read-only (default_transaction_read_only), so a report that tried to write would fail.
 * A replica that is behind is a second database the role can read, holding no collection yet.
 * Postgres only (PGlite has no replicas; the configuration refuses DATABASE_READ_URL without it).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { request } from 'undici';
import { ConfigError, describeConfig, loadConfig } from '../../src/config/index.js';
import { openDatabase } from '../../src/db/connection.js';
import { migrateDatabase } from '../../src/db/migrate.js';
import { silentLogger } from '../../src/logger.js';
import { startService, type RunningService } from '../../src/main.js';
import { freshPostgresDatabase } from '../helpers/databases.js';

const baseUrl = process.env.TEST_DATABASE_URL;

function withUser(url: string, user: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = '';
  return u.toString();
}

async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

async function getJson(service: RunningService, path: string): Promise<{ status: number; body: any }> {
  const res = await request(`${service.url}${path}`);
  const text = await res.body.text();
  return { status: res.statusCode, body: res.headers['content-type']?.toString().includes('json') ? JSON.parse(text) : text };
}

async function reads(service: RunningService, target: string, reason: string): Promise<number> {
  const res = await request(`${service.url}/metrics`);
  const text = await res.body.text();
  const line = text.split('\n').find((l) => l.startsWith(`cloudtally_report_reads_total{target="${target}",reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

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

describe.runIf(baseUrl)('postgres: reports on a read replica', () => {
  const role = `ct_reader_${randomBytes(4).toString('hex')}`;
  let primary: { url: string; drop(): Promise<void> };
  let behind: { url: string; drop(): Promise<void> };

  beforeAll(async () => {
    primary = await freshPostgresDatabase(baseUrl!);
    behind = await freshPostgresDatabase(baseUrl!);
    for (const { url } of [primary, behind]) {
      const db = await openDatabase({ driver: 'pg', url });
      await migrateDatabase(db);
      await db.close();
    }
    await sql(baseUrl!, `CREATE ROLE ${role} LOGIN; ALTER ROLE ${role} SET default_transaction_read_only = on`);
    for (const { url } of [primary, behind]) {
      await sql(url, `GRANT USAGE ON SCHEMA public TO ${role}; GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`);
    }
  }, 120_000);

  afterAll(async () => {
    await primary?.drop();
    await behind?.drop();
    await sql(baseUrl!, `DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
  });

  const start = (readUrl: string) =>
    startService(loadConfig({ DATABASE_URL: primary.url, DATABASE_READ_URL: readUrl, PORT: '0', SIM_TASK_DELAY_MS: '20' }), silentLogger(), {
      demoHistoryDays: 0,
    });

  it('the reader role cannot write (the test replica is really read-only)', async () => {
    await expect(sql(withUser(primary.url, role), `DELETE FROM snapshots`)).rejects.toThrow(/read-only transaction/);
  });

  it('serves reports and exports from a current replica', async () => {
    const service = await start(withUser(primary.url, role));
    try {
      await service.ready;
      await service.collection.collectNow('manual');
      await service.collection.idle();
      const overview = await getJson(service, '/api/reports/overview');
      expect(overview.status).toBe(200);
      const cost = await getJson(service, '/api/reports/cost?by=project');
      expect(cost.status).toBe(200);
      expect(cost.body.rows.length).toBeGreaterThan(0);
      // An export is never cached: it is routed afresh.
      const before = await reads(service, 'replica', 'current');
      const csv = await request(`${service.url}/api/reports/cost.csv?by=project`);
      expect(csv.statusCode).toBe(200);
      const lines = (await csv.body.text()).trim().split('\n');
      expect(lines.length).toBeGreaterThan(cost.body.rows.length);
      expect(await reads(service, 'replica', 'current')).toBeGreaterThan(before);
      expect(before).toBeGreaterThanOrEqual(1);
      expect(await reads(service, 'primary', 'behind')).toBe(0);
    } finally {
      await service.stop();
    }
  }, 240_000);

  it('reads the primary while the replica is behind, so no report shows older data than its version', async () => {
    const service = await start(withUser(behind.url, role));
    try {
      await service.ready;
      const cost = await getJson(service, '/api/reports/cost?by=project');
      expect(cost.status).toBe(200);
      // The "replica" holds no collection; the rows can only come from the primary.
      expect(cost.body.rows.length).toBeGreaterThan(0);
      expect(await reads(service, 'primary', 'behind')).toBeGreaterThanOrEqual(1);
      expect(await reads(service, 'replica', 'current')).toBe(0);
    } finally {
      await service.stop();
    }
  }, 240_000);
});
