/**
 * After a collection the report warmer computes the landing view of every cached report, so the
 * first request for a dashboard (HTML page or JSON, default parameters) only reads the data
 * version and is answered from the cache.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { allReports } from '../../src/reports/index.js';
import { createReportWarmer } from '../../src/web/warm-reports.js';
import { testDatabases } from '../helpers/databases.js';
import { NOW, seedKnownDataset } from '../reports/fixture.js';
import { startReportsApp, testConfig, type ReportsApp } from '../reports/helpers.js';

/** The database with every statement counted (the reports' only way to it is query/execute). */
function counting(db: Database): { db: Database; statements: () => number } {
  let n = 0;
  const counted = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if ((prop === 'query' || prop === 'execute') && typeof value === 'function') {
        return (...args: unknown[]) => {
          n++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: counted, statements: () => n };
}

describe.each(testDatabases())('report warmer on $name', ({ open }) => {
  let raw: Database;
  let app: ReportsApp;
  let base: string;
  let statements: () => number;
  const reports = allReports();
  const cachedNames = reports.filter((r) => r.cached).map((r) => r.name);

  beforeAll(async () => {
    raw = await open();
    await seedKnownDataset(raw);
    const config = testConfig();
    const counted = counting(raw);
    statements = counted.statements;
    const context = () => ({ db: counted.db, config, now: NOW });
    app = await startReportsApp(context);
    base = app.base;
    await createReportWarmer({ reports, context, logger: silentLogger() }).warm();
  });
  afterAll(async () => {
    await app?.close();
    await raw?.close();
  });

  async function statementsFor(path: string): Promise<number> {
    const before = statements();
    const res = await request(`${base}${path}`);
    await res.body.text();
    expect(res.statusCode, path).toBe(200);
    return statements() - before;
  }

  it('warms every cached data report, and only those', () => {
    expect(cachedNames).toEqual(expect.arrayContaining(['overview', 'cost', 'trend', 'inventory', 'changes', 'focus']));
    expect(cachedNames).not.toContain('collection-health');
  });

  it('answers the first request of each warmed page and JSON from the cache', async () => {
    for (const name of cachedNames) {
      // The page asks for its result and its filters: one data-version read each.
      expect(await statementsFor(`/reports/${name}`), name).toBeLessThanOrEqual(2);
      expect(await statementsFor(`/api/reports/${name}`), name).toBe(1);
    }
  });

  it('still computes views it did not warm', async () => {
    expect(await statementsFor('/api/reports/cost?by=project')).toBeGreaterThan(1);
  });
});
