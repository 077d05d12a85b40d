/**
 * `npm run bench anomalies [-- --instances 20000 --scopes 4 --days 30 --hourly-days 7 --samples 5 --keep]`
 *
 * The anomalies report's two costs on the reports benchmark's synthetic history (reports-data.ts:
 * hourly snapshots for the last --hourly-days days, one a day before, instances that come and go
 * every hour): the scan of every group of a grouping over the last 30 complete days (daily spend,
 * per-day gaps, the robust test), and one explanation of a day (priced resources of the day's
 * snapshots, the changes diff), on an hourly day and on a sealed day. p50/p95 over --samples.
 */
import { loadAverage, ms, out, percentile, spread } from './measure.js';
import { BENCH_SERVER, parseBenchOptions } from './options.js';
import { benchDatabaseName, onServer, withDatabase } from './database.js';
import { generate, sealThinnedDays } from './reports.js';
import type { BenchShape } from './reports-data.js';
import { loadConfig } from '../src/config/index.js';
import { openDatabase } from '../src/db/connection.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { lastCompleteDay, scanAnomalies } from '../src/reports/anomalies.js';
import { storeExplanations } from '../src/costing/derive/anomaly-explanations.js';
import { explainDay, prepareExplanation } from '../src/reports/shared/anomaly-explain.js';
import { addDays } from '../src/reports/shared/format.js';
import { dailyCostsFor } from '../src/costing/cost-over-time.js';



const parseOptions = (args: string[]) =>
  parseBenchOptions('anomalies', args, { databaseUrl: BENCH_SERVER as string, instances: 20_000, scopes: 4, days: 30, hourlyDays: 7, samples: 5, keep: false });
type Options = ReturnType<typeof parseOptions>;

async function timed(n: number, fn: () => Promise<unknown>): Promise<string> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return `p50 ${ms(percentile(times, 50))}, p95 ${ms(percentile(times, 95))}`;
}

export async function main(args: string[]): Promise<void> {
  const o = parseOptions(args);
  const dbName = benchDatabaseName('anomalies');
  const end = new Date(Math.floor(Date.now() / 3600_000) * 3600_000 - 3600_000);
  const shape: BenchShape = { instances: o.instances, scopes: o.scopes, hourlyDays: o.hourlyDays, totalDays: o.days, end };
  out(`anomalies benchmark: ${o.instances} instances in ${o.scopes} scopes, ${o.days} days (hourly for the last ${o.hourlyDays}) -> ${dbName}`);
  await onServer(o.databaseUrl, (c) => c.query(`CREATE DATABASE ${dbName}`));
  const db = await openDatabase({ driver: 'pg', url: withDatabase(o.databaseUrl, dbName) }, { poolSize: 4 });
  try {
    await migrateDatabase(db);
    await generate(db, shape);
    await sealThinnedDays(db, shape);
    await db.execute('vacuum analyze');
    const config = loadConfig({});
    const now = new Date(end.getTime() + 30 * 60_000);
    const ctx = { db, config, now };
    const last = lastCompleteDay(ctx);
    const range = { fromDay: addDays(last, -29), toDay: last };
    for (const grouping of config.anomalies.groupings) {
      const scan = await scanAnomalies(ctx, grouping, range);
      const kinds = scan.rows.reduce<Record<string, number>>((n, r) => ({ ...n, [r.kind]: (n[r.kind] ?? 0) + 1 }), {});
      out(`scan ${grouping}, ${range.fromDay}..${range.toDay}: ${JSON.stringify(kinds)}, ${scan.notEnoughHistory} group-days without enough history; ${await timed(o.samples, () => scanAnomalies(ctx, grouping, range))}`);
    }
    const sealedDay = addDays(last, -(o.hourlyDays + 1));
    for (const [label, day] of [['hourly day', last], ['sealed day', sealedDay]] as const) {
      const costs = (await dailyCostsFor(db, config, now, 'tag:team', day, day)).filter((c) => c.currency !== null && c.cost !== null);
      const biggest = costs.sort((a, b) => Number(b.cost) - Number(a.cost))[0];
      if (!biggest) continue;
      const q = { day, dimension: 'tag:team', group: biggest.group_value, currency: biggest.currency! };
      const e = await explainDay(db, config, now, q);
      out(`explain ${label} ${day}, tag:team ${q.group} ${q.currency}: ${e.lines.length} lines (+${e.more}); ${await timed(o.samples, () => explainDay(db, config, now, q))}`);
      // As the report reads it once a run has stored it (costing/derive/after-run.ts): the inputs checked, the row read.
      await storeExplanations(db, now, { candidates: async () => [q], prepare: (key) => prepareExplanation(db, config, now, key) });
      out(`explain ${label} ${day}, stored after the run: ${await timed(o.samples, () => explainDay(db, config, now, q))}`);
    }
  } finally {
    await db.close();
    if (!o.keep) await onServer(o.databaseUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`));
  }
}
