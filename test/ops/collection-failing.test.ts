/**
 * A failing collection is loud where people look: a banner on every page, /readyz "degraded",
 * and a metric, while the latest run of a scope failed; all gone once a later run succeeds.
 * Wired as main.ts wires them, over real HTTP, with the simulator refusing a wrong API key.
 */
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudClient, type CloudClient } from '../../src/cloud/index.js';
import { createCollectionService, failingUnits, runCollection, type CollectionService } from '../../src/collect/index.js';
import { failRun } from '../../src/collect/run-record.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { createMetrics, healthRouter, metricsRouter } from '../../src/ops/index.js';
import { allReports } from '../../src/reports/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { createWebApp } from '../../src/web/app.js';
import { startTestSimulator, testConfig, testDeps } from '../collect/helpers.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort, type Listening } from '../helpers/listen.js';

const HOUR = 3_600_000;

function clientWith(sim: Simulator, config: Config, apiKey: string, baseUrl = sim.url): CloudClient {
  return createCloudClient({
    baseUrl,
    apiKey,
    timeoutMs: config.client.timeoutMs,
    maxConcurrency: config.client.maxConcurrency,
    retry: { maxAttempts: config.client.maxRetries + 1, baseDelayMs: 5, maxDelayMs: 40 },
  });
}

describe.each(testDatabases())('a failing collection ($name)', ({ open }) => {
  let sim: Simulator;
  let config: Config;
  let db: Database;
  let wrong: CloudClient;
  let right: CloudClient;
  let current: CollectionService;
  let server: Listening;
  let base: string;

  beforeAll(async () => {
    sim = await startTestSimulator({ seed: 41, apiKey: 'the-right-key' });
    config = testConfig();
    db = await open();
    wrong = clientWith(sim, config, 'a-wrong-key');
    right = clientWith(sim, config, 'the-right-key');
    current = createCollectionService(testDeps(db, sim, wrong, config));

    const metrics = createMetrics({ database: db, defaultMetrics: false });
    const app = express();
    app.use(
      healthRouter({
        database: db,
        lastGoodCollectionAt: async () => (await current.status()).lastGoodAt,
        collectionFailures: () => failingUnits(db),
        startedAt: new Date(),
        collectionMaxAgeMs: 2 * HOUR,
      }),
    );
    app.use(metricsRouter(metrics, { access: 'open' }));
    app.use(createWebApp({ reports: allReports(), context: () => ({ db, config, now: new Date() }), logger: silentLogger(), demo: false, status: () => current.status() }));
    server = await listenOnFreePort(app);
    base = server.url;
  });
  afterAll(async () => {
    await server?.close();
    await current?.stop();
    await db?.close();
    await wrong?.close();
    await right?.close();
    await sim?.close();
  });

  const page = async (path: string) => (await fetch(base + path)).text();
  const readyz = async () => {
    const res = await fetch(`${base}/readyz`);
    return { status: res.status, body: (await res.json()) as { status: string; collection: string; checks: { collection: Record<string, any> } } };
  };
  const metric = async () => (await fetch(`${base}/metrics`)).text();
  const scopeKeys = () => sim.state.scopes().map((s) => `p${s.project_id}-r${s.region_id}`);

  it('with a wrong API key: a banner on every page names the scopes and "API key not accepted (401)"', async () => {
    await current.collectNow();
    await current.idle();
    const [run] = await db.query<{ status: string }>('SELECT status FROM collection_runs ORDER BY id DESC LIMIT 1');
    expect(run!.status).toBe('failed');
    for (const path of ['/reports/overview', '/reports/inventory?kind=ports', '/reports/collection-health']) {
      const html = await page(path);
      expect(html, path).toMatch(/<p class="banner banner-error" role="alert">Collection failing for [^<]*: API key not accepted \(401\) \(/);
      for (const scope of scopeKeys().slice(0, 3)) expect(html, path).toContain(scope);
      expect(html, path).toContain('global');
      expect(html, path).toContain('No data collected yet.');
    }
    // "Nothing to work from" (ports without instances) is not shown as a reason of its own.
    expect(await page('/reports/overview')).not.toContain('another collector of this scope has not succeeded');
  });

  it('answers /readyz with collection "degraded", each failing unit and the reason (200 within the start-up grace)', async () => {
    const { status, body } = await readyz();
    expect(status).toBe(200);
    expect(body.collection).toBe('degraded');
    expect(body.checks.collection).toMatchObject({ ok: true, state: 'degraded', reason: 'API key not accepted (401)' });
    expect(body.checks.collection.failing).toEqual(
      expect.arrayContaining([expect.objectContaining({ collector: 'instances', scope: scopeKeys()[0], reason: 'API key not accepted (401)', run_id: expect.any(Number) })]),
    );
  });

  it('sets cloudtally_collection_scope_failing to 1 per failing unit, with the cause', async () => {
    const text = await metric();
    expect(text).toContain(`cloudtally_collection_scope_failing{collector="instances",scope="${scopeKeys()[0]}",cause="auth"} 1`);
    expect(text).toContain('cloudtally_collection_scope_failing{collector="storage_keys",scope="global",cause="auth"} 1');
    expect(Number(/cloudtally_collection_failing_units (\d+)/.exec(text)?.[1])).toBeGreaterThanOrEqual(scopeKeys().length);
  });

  it('with the right key: the banner is gone, /readyz says ok and the metric falls to 0', async () => {
    await current.stop();
    current = createCollectionService(testDeps(db, sim, right, config));
    await current.collectNow();
    await current.idle();
    const [run] = await db.query<{ status: string }>('SELECT status FROM collection_runs ORDER BY id DESC LIMIT 1');
    expect(run!.status).toBe('succeeded');
    for (const path of ['/reports/overview', '/reports/inventory?kind=ports', '/reports/collection-health']) {
      expect(await page(path), path).not.toContain('banner-error');
    }
    const { status, body } = await readyz();
    expect(status).toBe(200);
    expect(body.collection).toBe('ok');
    expect(body.checks.collection.failing).toBeUndefined();
    const text = await metric();
    expect(text).toContain(`cloudtally_collection_scope_failing{collector="instances",scope="${scopeKeys()[0]}",cause="auth"} 0`);
    expect(text).toMatch(/cloudtally_collection_failing_units 0/);
  });

  it('shows a run that failed as a whole until a later run finishes', async () => {
    const [row] = await db.query<{ id: number }>(`INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('schedule', '{flavors}', 'gone:1') RETURNING id`);
    await failRun(db, row!.id, 'run died: no heartbeat since 2026-01-01T00:00:00Z from runner gone:1');
    expect(await page('/reports/overview')).toContain(`Collection run failed: run died: no heartbeat since 2026-01-01T00:00:00Z from runner gone:1 (last run #${row!.id}).`);
    expect((await readyz()).body.collection).toBe('degraded');
    await runCollection(testDeps(db, sim, right, config), { collectors: ['flavors'] });
    expect(await page('/reports/overview')).not.toContain('banner-error');
  });

  it('names an unreachable cloud API as such', async () => {
    const unreachable = clientWith(sim, config, 'the-right-key', 'http://127.0.0.1:9');
    try {
      await runCollection(testDeps(db, sim, unreachable, config), { collectors: ['flavors'] });
    } finally {
      await unreachable.close();
    }
    expect(await page('/reports/overview')).toMatch(/Collection failing for [^<]*: cloud API unreachable \(flavors; last run #\d+\)/);
    await runCollection(testDeps(db, sim, right, config), { collectors: ['flavors'] });
    expect(await page('/reports/overview')).not.toContain('banner-error');
  });
});
