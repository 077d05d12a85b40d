import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCloudClient } from '../../src/cloud/index.js';
import type { Database } from '../../src/db/connection.js';
import { createMetrics, type Metrics } from '../../src/ops/metrics.js';
import { metricsRouter } from '../../src/ops/metrics-route.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort } from '../helpers/listen.js';

/** The value of one sample line, e.g. sample(text, 'cloudtally_collection_runs_total{status="partial"}'). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics: collection runs', () => {
  it('counts finished runs by status and rows written by kind, and times units per collector and scope', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const hook = metrics.collectionProgressHook();
    hook({ type: 'unit-done', collector: 'instances', scope: 'p1-r1', rows: 12, durationMs: 1500, itemErrors: 0 });
    hook({
      type: 'unit-failed',
      collector: 'clusters',
      scope: 'p1-r2',
      durationMs: 200,
      error: { collector: 'clusters', scope: 'p1-r2', endpoint: 'GET /x', status: 503, message: 'down' },
    });
    const summary = {
      runId: 1,
      status: 'partial' as const,
      alreadyRunning: false,
      trigger: 'manual' as const,
      collectors: [],
      startedAt: new Date(),
      finishedAt: new Date(),
      durationMs: 1700,
      counts: { instance: 12, port: 30, cluster: 0 },
      errors: [],
      perCollector: [],
    };
    hook({ type: 'run-finished', summary });
    metrics.observeRun({ status: 'succeeded', counts: { instance: 3 }, alreadyRunning: false });
    // A "collect now" that found a run in progress started nothing: not counted.
    metrics.observeRun({ status: 'running' as never, counts: {}, alreadyRunning: true });

    const text = await metrics.text();
    expect(sample(text, 'cloudtally_collection_runs_total{status="partial"}')).toBe(1);
    expect(sample(text, 'cloudtally_collection_runs_total{status="succeeded"}')).toBe(1);
    expect(text).not.toContain('status="running"');
    expect(sample(text, 'cloudtally_rows_written_total{kind="instance"}')).toBe(15);
    expect(sample(text, 'cloudtally_rows_written_total{kind="port"}')).toBe(30);
    expect(text).not.toContain('kind="cluster"');
    expect(sample(text, 'cloudtally_collection_unit_duration_seconds_count{collector="instances",scope="p1-r1",outcome="ok"}')).toBe(1);
    expect(sample(text, 'cloudtally_collection_unit_duration_seconds_sum{collector="instances",scope="p1-r1",outcome="ok"}')).toBe(1.5);
    expect(sample(text, 'cloudtally_collection_unit_duration_seconds_count{collector="clusters",scope="p1-r2",outcome="failed"}')).toBe(1);
  });

  it('counts actions by action and result', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.observeAction({ action: 'stop_instance', result: 'succeeded' });
    metrics.observeAction({ action: 'stop_instance', result: 'succeeded' });
    metrics.observeAction({ action: 'stop_instance', result: 'failed' });
    const text = await metrics.text();
    expect(sample(text, 'cloudtally_actions_total{action="stop_instance",result="succeeded"}')).toBe(2);
    expect(sample(text, 'cloudtally_actions_total{action="stop_instance",result="failed"}')).toBe(1);
  });

  it('includes the Node.js process metrics unless turned off', async () => {
    expect(await createMetrics().text()).toContain('process_cpu_user_seconds_total');
    expect(await createMetrics({ defaultMetrics: false }).text()).not.toContain('process_cpu_user_seconds_total');
  });
});

describe('metrics: cloud API requests through the client hook', () => {
  let sim: Simulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, size: 8 });
  });
  afterAll(async () => {
    await sim.close();
  });

  it('counts attempts by endpoint template and status, and retries apart', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const client = createCloudClient({
      baseUrl: sim.url,
      apiKey: sim.apiKey,
      retry: { baseDelayMs: 1, maxDelayMs: 5 },
      onRequest: metrics.cloudRequestHook(),
    });
    try {
      const [scope] = sim.manifest().scopes;
      sim.injectFaults({ kind: 'status', status: 503, match: { path: /keypairs/ }, count: 1 });
      await client.listKeypairs(scope!.project_id, scope!.region_id);
      await client.listKeypairs(scope!.project_id, scope!.region_id);
      await expect(client.listKeypairs(999_999, 1)).rejects.toThrow();
    } finally {
      await client.close();
    }
    const text = await metrics.text();
    const endpoint = 'endpoint="GET /cloud/v1/keypairs/{project_id}/{region_id}"';
    expect(sample(text, `cloudtally_api_requests_total{${endpoint},status="200"}`)).toBe(2);
    expect(sample(text, `cloudtally_api_requests_total{${endpoint},status="503"}`)).toBe(1);
    expect(sample(text, `cloudtally_api_retries_total{${endpoint},status="503"}`)).toBe(1);
    // The failed request's status (whatever the simulator answers for an unknown project) is counted, not retried.
    const failed = text.split('\n').filter((l) => l.startsWith(`cloudtally_api_requests_total{${endpoint}`) && /status="4\d\d"/.test(l));
    expect(failed).toHaveLength(1);
    expect(sample(text, `cloudtally_api_request_duration_seconds_count{${endpoint}}`)).toBe(4);
    // Paths with ids never become labels.
    expect(text).not.toContain(`/keypairs/${scope0(sim)}`);
  });
});

function scope0(sim: Simulator): string {
  const [scope] = sim.manifest().scopes;
  return `${scope!.project_id}/${scope!.region_id}`;
}

describe('metrics: HTTP requests by route pattern', () => {
  it('labels requests with the matched route, never the raw URL', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const inner = express();
    inner.get('/reports/:id', (req, res) => {
      res.send(`report ${req.params.id}`);
    });
    inner.get('/boom', () => {
      throw new Error('boom');
    });
    const app = express();
    app.use(metrics.httpMiddleware());
    app.use(metricsRouter(metrics, { access: 'open' }));
    app.use(inner); // the web app is mounted as a sub-app, as the start command does
    const server = await listenOnFreePort(app);
    try {
      for (const id of ['a', 'b', 'c']) expect((await fetch(`${server.url}/reports/${id}?x=${id}`)).status).toBe(200);
      expect((await fetch(`${server.url}/no/such/${Math.random()}`)).status).toBe(404);
      expect((await fetch(`${server.url}/boom`)).status).toBe(500);
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      expect(sample(text, 'cloudtally_http_request_duration_seconds_count{method="GET",route="/reports/:id",status="200"}')).toBe(3);
      expect(sample(text, 'cloudtally_http_request_duration_seconds_count{method="GET",route="(unmatched)",status="404"}')).toBe(1);
      expect(sample(text, 'cloudtally_http_request_duration_seconds_count{method="GET",route="/boom",status="500"}')).toBe(1);
      expect(text).not.toMatch(/route="\/reports\/[abc]"/);
      expect(text).not.toContain('/no/such');
    } finally {
      await server.close();
    }
  });
});

describe('metrics: /metrics access', () => {
  const token = 'a-scrape-token-0123456789';
  const fetchMetrics = async (settings: Parameters<typeof metricsRouter>[1], headers: Record<string, string> = {}) => {
    const app = express();
    app.use(metricsRouter(createMetrics({ defaultMetrics: false }), settings));
    app.use((_req, res) => {
      res.status(404).send('not found');
    });
    const server = await listenOnFreePort(app);
    try {
      const res = await fetch(`${server.url}/metrics`, { headers });
      return { status: res.status, body: await res.text(), auth: res.headers.get('www-authenticate') };
    } finally {
      await server.close();
    }
  };

  it('open: anyone may scrape', async () => {
    const res = await fetchMetrics({ access: 'open' });
    expect(res.status).toBe(200);
    expect(res.body).toContain('# TYPE cloudtally_collection_runs_total counter');
  });

  it('token: only the right bearer token may scrape', async () => {
    expect((await fetchMetrics({ access: 'token', token })).status).toBe(401);
    const wrong = await fetchMetrics({ access: 'token', token }, { authorization: `Bearer ${token}x` });
    expect(wrong.status).toBe(401);
    expect(wrong.auth).toMatch(/^Bearer/);
    expect(wrong.body).not.toContain('cloudtally_');
    expect((await fetchMetrics({ access: 'token', token }, { authorization: `Basic ${token}` })).status).toBe(401);
    const right = await fetchMetrics({ access: 'token', token }, { authorization: `bearer ${token}` });
    expect(right.status).toBe(200);
    expect(right.body).toContain('cloudtally_collection_runs_total');
  });

  it('token: refuses to start with a short or missing token', () => {
    expect(() => metricsRouter(createMetrics({ defaultMetrics: false }), { access: 'token', token: 'short' })).toThrow(/16/);
    expect(() => metricsRouter(createMetrics({ defaultMetrics: false }), { access: 'token' })).toThrow(/16/);
  });

  it('off: there is no /metrics route', async () => {
    const res = await fetchMetrics({ access: 'off' });
    expect(res.status).toBe(404);
    expect(res.body).toBe('not found');
  });
});

describe.each(testDatabases())('metrics: age of the latest good snapshot ($name)', ({ open }) => {
  let database: Database;
  beforeAll(async () => {
    database = await open();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('is read from the database at scrape time, per kind and scope, from complete snapshots only', async () => {
    const metrics: Metrics = createMetrics({ defaultMetrics: false, database });
    expect(await metrics.text()).not.toMatch(/^cloudtally_snapshot_age_seconds\{/m);
    expect(sample(await metrics.text(), 'cloudtally_database_up')).toBe(1);

    await database.execute(
      `INSERT INTO snapshots (kind, scope_key, taken_at, complete) VALUES
         ('instance', 'p1-r1', now() - interval '2 hours', true),
         ('instance', 'p1-r1', now() - interval '30 minutes', true),
         ('instance', 'p1-r1', now() - interval '1 minute', false),
         ('flavor', 'p1-r1', now() - interval '6 hours', true),
         ('keypair', 'p2-r1', now() - interval '1 minute', false)`,
    );
    const text = await metrics.text();
    const instanceAge = sample(text, 'cloudtally_snapshot_age_seconds{kind="instance",scope="p1-r1"}')!;
    expect(instanceAge).toBeGreaterThanOrEqual(30 * 60);
    expect(instanceAge).toBeLessThan(60 * 60);
    expect(sample(text, 'cloudtally_snapshot_age_seconds{kind="flavor",scope="p1-r1"}')).toBeGreaterThanOrEqual(6 * 3600);
    // Only an incomplete snapshot: no age at all (it is not a good snapshot).
    expect(text).not.toContain('scope="p2-r1"');

    // Pruned away: the series disappears instead of keeping its last value.
    await database.execute(`DELETE FROM snapshots WHERE kind = 'flavor'`);
    expect(await metrics.text()).not.toContain('kind="flavor"');
  });

  it('reports the database as down (and no ages) when the query fails, without failing the scrape', async () => {
    const broken = { ...database, query: () => Promise.reject(new Error('connection terminated')) } as unknown as Database;
    const metrics = createMetrics({ defaultMetrics: false, database: broken });
    const text = await metrics.text();
    expect(sample(text, 'cloudtally_database_up')).toBe(0);
    expect(text).not.toMatch(/^cloudtally_snapshot_age_seconds\{/m);
  });
});

describe('metrics: cost gauges', () => {
  it('hold the figures last set: a group or currency missing from new figures disappears, amounts are the decimals as numbers', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.setCosts({
      perHour: [
        { currency: 'EUR', groupBy: 'total', group: 'total', value: '1.25' },
        { currency: 'EUR', groupBy: 'tag:team', group: 'data', value: '1.000000001' },
        { currency: 'EUR', groupBy: 'tag:team', group: '(untagged)', value: '0.249999999' },
        { currency: 'USD', groupBy: 'total', group: 'total', value: '0.5' },
      ],
      monthToDate: [{ currency: 'EUR', value: '812.3456' }],
    });
    let text = await metrics.text();
    expect(sample(text, 'cloudtally_cost_per_hour{currency="EUR",group_by="tag:team",group="data"}')).toBe(1.000000001);
    expect(sample(text, 'cloudtally_cost_per_hour{currency="EUR",group_by="tag:team",group="(untagged)"}')).toBe(0.249999999);
    expect(sample(text, 'cloudtally_cost_month_to_date{currency="EUR"}')).toBe(812.3456);

    metrics.setCosts({ perHour: [{ currency: 'EUR', groupBy: 'total', group: 'total', value: '1' }], monthToDate: [] });
    text = await metrics.text();
    expect(sample(text, 'cloudtally_cost_per_hour{currency="EUR",group_by="total",group="total"}')).toBe(1);
    expect(text).not.toMatch(/group="data"|currency="USD"/);
    // No month covered: the gauge has no sample (unknown), not 0.
    expect(text).not.toMatch(/^cloudtally_cost_month_to_date\{/m);
  });
});
