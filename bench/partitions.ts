/**
 * Team-scope cost partitions in `bench reports --team-scope` (costing/partitions.ts): what writing
 * them costs the rollups, measured in the same run against the rollups without them, and what a
 * team-scoped user's cost reports cost, each beside a static file of the same app.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadConfig } from '../src/config/index.js';
import { createWebAuth } from '../src/web/auth.js';
import type { Database } from '../src/db/connection.js';
import { computeCostRollups } from '../src/costing/derive/rollups.js';
import { accessScopeOf } from '../src/auth/access-scope.js';
import { silentLogger } from '../src/logger.js';
import { allReports } from '../src/reports/index.js';
import { createWebApp } from '../src/web/app.js';
import { loadAverage, ms, out, percentile, spread } from './measure.js';

/** The tag key the bench's scoped user is scoped by, and the value (a team of the generated data). */
export const BENCH_SCOPE = accessScopeOf({ by: 'tag:team', values: ['data'] });

/**
 * Rollups of the newest run's instance snapshots written `rounds` times with the `team` key's
 * partitions and without them (the key removed from cost_partition_keys for the time), alternated
 * so both see the same load; the key and the partitions are back afterwards.
 */
export async function rollupsWithPartitions(db: Database, rounds: number): Promise<Record<string, unknown>> {
  const snapshots = await db.query<{ id: number }>(
    `select id from snapshots where kind = 'instance' and complete and run_id = (select max(run_id) from snapshots where kind = 'instance' and complete) order by id`,
  );
  const timeAll = async () => {
    const started = performance.now();
    for (const s of snapshots) await computeCostRollups(db, s.id);
    return performance.now() - started;
  };
  const rowsOf = async () => Number((await db.query<{ n: string }>('select count(*) as n from cost_rollups where snapshot_id = any($1::bigint[])', [snapshots.map((s) => s.id)]))[0]!.n);
  const withKey: number[] = [];
  const without: number[] = [];
  let rowsWith = 0;
  let rowsWithout = 0;
  for (let i = 0; i < rounds; i++) {
    withKey.push(await timeAll());
    rowsWith = await rowsOf();
    await db.execute(`delete from cost_partition_keys where key = 'team'`);
    try {
      without.push(await timeAll());
      rowsWithout = await rowsOf();
    } finally {
      await db.execute(`insert into cost_partition_keys (key, complete_from) values ('team', '-infinity') on conflict (key) do nothing`);
    }
  }
  await timeAll();
  const ratios = withKey.map((t, i) => t / without[i]!);
  const r = spread(ratios);
  out(
    `rollups of the newest run (${snapshots.length} instance snapshots) with the team partitions: ${withKey.map(ms).join(', ')}; without: ${without.map(ms).join(', ')}; ` +
      `ratio median ${r.median.toFixed(2)} x (min ${r.min.toFixed(2)}, max ${r.max.toFixed(2)}); rollup rows ${rowsWith.toLocaleString('en-US')} against ${rowsWithout.toLocaleString('en-US')} (load ${loadAverage()})`,
  );
  return { snapshots: snapshots.length, withMs: withKey, withoutMs: without, ratio: r, rowsWith, rowsWithout };
}

/** A scoped user's cost reports, cache off, each beside the static file sampled just before it. */
export async function scopedReportTimings(
  db: Database,
  now: Date,
  samples: number,
  sample: (url: string, n: number, headers?: Record<string, string>) => Promise<number[]>,
): Promise<Record<string, unknown>> {
  // Signed in as the service signs in a proxied user: the proxy's header names the user, whom team_scopes scopes to team data.
  const config = loadConfig(
    { CLOUDTALLY_CONFIG: 'bench.json', CLOUDTALLY_SESSION_SECRET: 'bench-session-secret-0123456789abcdef' },
    { readFile: () => JSON.stringify({ auth: { proxy: { header: 'X-Forwarded-User', trusted_addresses: ['127.0.0.1/32'], default_role: 'viewer', team_scopes: { map: { lead: { by: BENCH_SCOPE.by, values: BENCH_SCOPE.values } } } } } }) },
  );
  const logger = silentLogger();
  const app = createWebApp({ reports: allReports(), context: () => ({ db, config, now }), logger, demo: false, secret: config.auth.sessionSecret ?? undefined, auth: createWebAuth({ config, db, logger }) });
  const lead = { 'x-forwarded-user': 'lead' };
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const cases: Array<[string, string]> = [
    ['overview', 'overview'],
    ['cost by project', 'cost?by=project'],
    ['trend (team, 7 days hourly)', 'trend?by=tag%3Ateam&days=7'],
    ['trend (kind, 30 days daily cost)', 'trend?by=kind&days=30&measure=daily-cost'],
    ['monthly by region', 'monthly?by=region'],
    ['anomalies (30 days)', 'anomalies'],
  ];
  const timings: Record<string, unknown> = {};
  try {
    out('');
    out(`a team-scoped user (team = data), report cache off (${samples} samples after warm-up)`);
    out('report                               | JSON p50 | JSON p95 | HTML p95 | static p95 | worst p95 / static p95');
    for (const [label, path] of cases) {
      const staticP95 = percentile(await sample(`${base}/static/app.css`, samples), 95);
      const json = await sample(`${base}/api/reports/${path}`, samples, lead);
      const html = await sample(`${base}/reports/${path}`, samples, lead);
      const worst = Math.max(percentile(json, 95), percentile(html, 95));
      timings[label] = { jsonP50: percentile(json, 50), jsonP95: percentile(json, 95), htmlP95: percentile(html, 95), staticP95 };
      out(`${label.padEnd(36)} | ${ms(percentile(json, 50)).padStart(8)} | ${ms(percentile(json, 95)).padStart(8)} | ${ms(percentile(html, 95)).padStart(8)} | ${ms(staticP95).padStart(10)} | ${(worst / staticP95).toFixed(1)} x`);
    }
    out(`(load ${loadAverage()})`);
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  return timings;
}
