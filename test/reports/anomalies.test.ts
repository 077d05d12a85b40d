/**
 * Spend anomalies, explained, computed by hand from the demo's list prices (src/simulator/catalog.ts,
 * Frankfurt-1 = 100 % of the catalog, EUR): g3-ai-24-256-1600-h100-80-1 3.10/h, g2-ai-12-120-800-a100-80-1
 * 2.45/h, g3-ai-16-232-1600-l40s-48-1 1.72/h; plus a 0.01/h flavor for the "cents" group.
 *
 * One scope (project 380101, region 38), one snapshot a day at 00:00 UTC, gaps capped at 24 h (each
 * snapshot prices its whole day). History 2025-05-01 .. 05-25, NOW = 05-26 12:00: the last complete
 * day is 05-24 (its end + the 24 h cap has passed).
 *   ml:   a1 h100 (74.40/day) + a2 a100 (58.80/day) = 133.20/day;
 *         from 05-20 a3 h100 also runs (+74.40 = 207.60); from 05-22 w1 is retagged web -> ml (+41.28 = 248.88)
 *   web:  w1 l40s 41.28/day, until the retag on 05-22 (then 0)
 *   tiny: t1 0.01/h = 0.24/day; from 05-20 t2 as well (0.48/day): +0.24, +100 %, but under the 10 EUR minimum
 *   The collection of 05-16 failed (an incomplete snapshot): the 05-15 one holds until 05-16 00:00, so 05-16 is
 *   not covered: a data gap (all groups at 0 that day, yet no drop).
 *
 * ml on 05-20: baseline 05-06 .. 05-19 minus the gap day = 13 days of 133.20: median 133.20, MAD 0;
 * change 207.60 - 133.20 = +74.40 = 55.86 % (74.40 / 133.20 = 0.558558..); a3 appeared: 3.10/h x 24 h = 74.40.
 * web on 05-22: baseline 13 days of 41.28: 0 - 41.28 = -41.28, -100 %; w1 moved out (team "web" -> "ml"): -1.72/h x 24 h.
 *
 * Project 380102 (same prices): p1 {team: platform} a100 runs every day; its flavor's price rises to 3.45/h from 05-18:
 * platform 58.80/day -> 82.80/day: on 05-18 +24.00 (+40.82 %), explained as a price change: +1.00/h x 24 h.
 */
import { request } from 'undici';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { foldSnapshot } from '../../src/db/versions.js';
import { DEFAULT_CACHE_OPTIONS } from '../../src/reports/shared/cache.js';
import { reportCache } from '../../src/reports/shared/define.js';
import { gpuFlavors, instances, gpuFlavorsKept, instancesKept } from '../../src/db/schema.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { OutgoingMessage } from '../../src/notify/message.js';
import { enqueueAnomalyAlerts } from '../../src/notify/anomaly-alerts.js';
import { workAfterRun } from '../../src/notify/after-run.js';
import { storeExplanations } from '../../src/costing/derive/anomaly-explanations.js';
import { explanationSource } from '../../src/reports/anomalies.js';
import { silentLogger } from '../../src/logger.js';
import { enqueueMessage } from '../../src/notify/outbox.js';
import { addDays } from '../../src/reports/shared/format.js';
import { testDatabases } from '../helpers/databases.js';
import { appTest } from '../helpers/reports-app.js';
import { parseCsv } from '../web/fixtures.js';
import { dec, type ReportsApp } from './helpers.js';
import { instance, run, snapshot } from './periods-fixture.js';

const NOW = new Date('2025-05-26T12:00:00Z');
const S = { scopeKey: '380101-38', projectId: 380101, regionId: 38 };
const P = { scopeKey: '380102-38', projectId: 380102, regionId: 38 };
const H100 = 'g3-ai-24-256-1600-h100-80-1';
const A100 = 'g2-ai-12-120-800-a100-80-1';
const L40S = 'g3-ai-16-232-1600-l40s-48-1';
const CHEAP = 'test-cents-1';

function anomalyConfig(extra: Record<string, unknown> = {}): Config {
  return loadConfig({ CLOUDTALLY_CONFIG: 'test.json' }, { readFile: () => JSON.stringify({ cost_max_gap_hours: 24, ...extra }) });
}

async function seed(db: Database): Promise<void> {
  const flavorAt = new Date('2025-04-30T23:00:00Z');
  const f = await snapshot(db, await run(db, flavorAt), 'flavor', S, flavorAt);
  const flavor = (name: string, hour: string) => ({
    snapshotId: f, flavorId: `f-${name}`, flavorName: name, currencyCode: 'EUR', pricePerHour: hour, pricePerMonth: null, priceStatus: 'show', projectId: 380101, regionId: 38, raw: {},
  });
  await bulkInsert(db, gpuFlavorsKept, [flavor(H100, '3.10'), flavor(A100, '2.45'), flavor(L40S, '1.72'), flavor(CHEAP, '0.01')]);
  // Project 380102: its a100 price rises from 2.45 to 3.45 per hour from 05-18 (a new flavor snapshot the evening before).
  const priced = async (at: Date, hour: string) => {
    const id = await snapshot(db, await run(db, at), 'flavor', P, at);
    await bulkInsert(db, gpuFlavorsKept, [{ ...flavor(A100, hour), snapshotId: id, projectId: 380102 }]);
  };
  await priced(flavorAt, '2.45');
  await priced(new Date('2025-05-17T23:00:00Z'), '3.45');
  const ids: number[] = [];
  for (let day = '2025-05-01'; day <= '2025-05-25'; day = addDays(day, 1)) {
    const at = new Date(`${day}T00:00:00Z`);
    const runId = await run(db, at);
    const id = await snapshot(db, runId, 'instance', S, at);
    const p = await snapshot(db, runId, 'instance', P, at);
    await bulkInsert(db, instancesKept, [{ snapshotId: p, ...instance(P, 'p1', A100, 'platform', true) }]);
    if (day === '2025-05-16') {
      // The collection of 05-16 failed half-way: incomplete snapshots, which no figure reads.
      await bulkInsert(db, instancesKept, [{ snapshotId: id, ...instance(S, 'a1', H100, 'ml', true) }]);
      await db.execute('update snapshots set complete = false where id = any($1::int[])', [[id, p]]);
      continue;
    }
    ids.push(p);
    await bulkInsert(db, instancesKept, [
      { snapshotId: id, ...instance(S, 'a1', H100, 'ml', true) },
      { snapshotId: id, ...instance(S, 'a2', A100, 'ml', true) },
      ...(day >= '2025-05-20' ? [{ snapshotId: id, ...instance(S, 'a3', H100, 'ml', true) }] : []),
      { snapshotId: id, ...instance(S, 'w1', L40S, day >= '2025-05-22' ? 'ml' : 'web', true) },
      { snapshotId: id, ...instance(S, 't1', CHEAP, 'tiny', true) },
      ...(day >= '2025-05-20' ? [{ snapshotId: id, ...instance(S, 't2', CHEAP, 'tiny', true) }] : []),
    ]);
    ids.push(id);
  }
  for (const id of ids) await computeCostRollups(db, id);
}

interface AnomalyJson {
  rows: Array<Record<string, unknown> & { lines: Array<Record<string, unknown>> }>;
  summary: Array<{ label: string; value: unknown }>;
}

async function get(app: ReportsApp, path: string): Promise<{ status: number; text: string }> {
  const res = await request(`${app.base}${path}`);
  return { status: res.statusCode, text: await res.body.text() };
}

describe.each(testDatabases())('anomalies on $name', (database) => {
  let db: Database;
  let app: ReportsApp;
  const config = anomalyConfig({
    channels: [{ name: 'finance-hook', type: 'webhook', url: 'https://hooks.example.com/x' }],
    anomalies: { alert_groupings: [{ by: 'tag:team', notify: ['finance-hook'] }] },
  });

  appTest.beforeAll(async ({ reportsApps }) => {
    ({ db, app } = await reportsApps.open(database, { seed, config, now: NOW }));
  }, 120_000);

  const json = async (query: string): Promise<AnomalyJson> => {
    const res = await get(app, `/api/reports/anomalies?${query}`);
    expect(res.status, res.text.slice(0, 400)).toBe(200);
    return JSON.parse(res.text) as AnomalyJson;
  };
  const find = (body: AnomalyJson, day: string, group: string | null) => body.rows.find((r) => r.day === day && r.group === group);

  it('flags the day a known instance set starts, with median, change and the explanation line', async () => {
    const body = await json('by=tag:team&from=2025-05-01&to=2025-05-31');
    const row = find(body, '2025-05-20', 'ml')!;
    expect(row).toBeDefined();
    expect([row.kind, row.currency, dec(row.spend), dec(row.baseline_median), dec(row.change), row.change_percent]).toEqual(['spike', 'EUR', 207.6, 133.2, 74.4, '55.86']);
    expect(row.baseline).toEqual({ days: 13, median: '133.2', mad: '0', bound: '0' });
    expect(row.lines).toHaveLength(1);
    expect(row.lines[0]).toMatchObject({ kind: 'instance', scope: '380101-38', resource_id: 'a3', change: 'appeared', price_per_hour_before: '0', price_per_hour_after: '3.1', hours: '24' });
    expect(dec(row.lines[0]!.impact)).toBe(74.4);
    expect(String(row.explanation)).toContain('1 appeared (instances) +74.40 EUR');
    // The next day the level is still above the median, but nothing changed: said so, with the day it began.
    const next = find(body, '2025-05-21', 'ml')!;
    expect([next.kind, dec(next.change), next.since, next.lines]).toEqual(['spike', 74.4, '2025-05-20', []]);
    expect(String(next.explanation)).toContain('the spike flagged since 2025-05-20 persists');
  });

  it('explains a retag as a move between groups, with the tag change from the diff', async () => {
    const body = await json('by=tag:team&from=2025-05-22&to=2025-05-22');
    const web = find(body, '2025-05-22', 'web')!;
    expect([web.kind, dec(web.spend), dec(web.baseline_median), dec(web.change), web.change_percent]).toEqual(['drop', 0, 41.28, -41.28, '-100.00']);
    expect(web.lines).toHaveLength(1);
    expect(web.lines[0]).toMatchObject({ resource_id: 'w1', change: 'moved out', details: 'team: "web" -> "ml"', hours: '24' });
    expect(dec(web.lines[0]!.impact)).toBe(-41.28);
    const ml = find(body, '2025-05-22', 'ml')!;
    // 248.88 against the median 133.20 (11 days of 133.20, 2 of 207.60): +115.68, of which the move explains +41.28 today.
    expect([ml.kind, dec(ml.spend), dec(ml.change)]).toEqual(['spike', 248.88, 115.68]);
    expect(ml.lines.map((l) => [l.resource_id, l.change, dec(l.impact)])).toEqual([['w1', 'moved in', 41.28]]);
  });

  it('explains a flavor price change, priced from the flavor snapshots before and during the day', async () => {
    const body = await json('by=tag:team&from=2025-05-18&to=2025-05-18');
    const row = find(body, '2025-05-18', 'platform')!;
    expect([row.kind, dec(row.spend), dec(row.baseline_median), dec(row.change), row.change_percent]).toEqual(['spike', 82.8, 58.8, 24, '40.82']);
    expect(row.lines).toHaveLength(1);
    expect(row.lines[0]).toMatchObject({ resource_id: 'p1', change: 'price changed', details: 'price per hour: 2.45 -> 3.45', price_per_hour_before: '2.45', price_per_hour_after: '3.45', hours: '24' });
    expect(dec(row.lines[0]!.impact)).toBe(24);
  });

  it('lists a day the snapshots do not cover as a data gap, never as an anomaly, and leaves cents alone', async () => {
    const body = await json('by=tag:team&from=2025-05-01&to=2025-05-31');
    expect(body.rows.filter((r) => r.day === '2025-05-16').map((r) => [r.kind, r.group])).toEqual([['data gap', null]]);
    expect(find(body, '2025-05-16', null)!.lines).toEqual([
      { kind: 'instance', scope: '380101-38', covered_hours: 0 },
      { kind: 'instance', scope: '380102-38', covered_hours: 0 },
    ]);
    expect(body.rows.filter((r) => r.group === 'tiny')).toEqual([]);
    // 05-01 .. 05-07 have fewer than 7 baseline days: 7 days x 4 groups not judged.
    expect(body.summary.find((s) => s.label === 'Group-days without enough history')?.value).toBe(28);
    // Days after 05-24 are not complete yet.
    expect(body.rows.every((r) => String(r.day) <= '2025-05-24')).toBe(true);
  });

  it('groups by project too, and refuses a grouping it does not watch', async () => {
    const body = await json('by=project&from=2025-05-20&to=2025-05-20');
    // 380101 on 05-20: 207.60 + 41.28 + 0.48 = 249.36 against 133.20 + 41.28 + 0.24 = 174.72: +74.64.
    // (380102 is still flagged for its price rise of 05-18: 82.80 against the median 58.80.)
    expect(body.rows.map((r) => [r.group, r.kind, dec(r.change)])).toEqual([['380101', 'spike', 74.64], ['380102', 'spike', 24]]);
    const bad = await get(app, '/api/reports/anomalies?by=flavor');
    expect(bad.status).toBe(400);
    expect(bad.text).toContain('anomaly groupings');
  });

  it('serves CSV and HTML with the explanation lines', async () => {
    const csv = await get(app, '/api/reports/anomalies.csv?by=tag:team&from=2025-05-20&to=2025-05-20');
    expect(csv.status).toBe(200);
    const table = parseCsv(csv.text);
    expect(table[0]).toEqual(['Day', 'Group', 'Currency', 'Spend', 'Baseline median', 'Change', 'Change %', 'Kind', 'Explanation', 'What changed']);
    const ml = table.find((r) => r[1] === 'ml')!;
    expect(ml.slice(0, 8)).toEqual(['2025-05-20', 'ml', 'EUR', '207.60', '133.20', '74.40', '55.86', 'spike']);
    expect(ml[9]).toContain(`instance a3 in 380101-38, ${H100}: appeared; +3.10/h x 24 h = +74.40 EUR`);
    const html = await get(app, '/reports/anomalies?by=tag:team&from=2025-05-20&to=2025-05-20');
    expect(html.status).toBe(200);
    expect(html.text).toContain('<ul class="lines"><li>instance a3 in 380101-38');
  });

  it('enqueues an alert once per flagged day with a change in the snapshots, keyed by grouping, group, currency and day', async () => {
    const ctx = { db, config, now: NOW };
    const keys = await enqueueAnomalyAlerts(ctx, enqueueMessage, { fromDay: '2025-05-01' });
    // ml 05-21 and 05-23/24, web 05-23/24 stay flagged (the median has not moved yet) but nothing changed on them: no alert.
    // tiny (+0.24 EUR) and the data gap of 05-16: never.
    const expected = [
      'anomaly:tag:team:ml:EUR:2025-05-20',
      'anomaly:tag:team:ml:EUR:2025-05-22',
      'anomaly:tag:team:platform:EUR:2025-05-18',
      'anomaly:tag:team:web:EUR:2025-05-22',
    ];
    expect([...keys].sort()).toEqual(expected);
    const stored = await db.query<{ key: string; payload: { subject: string; text: string; data: Record<string, unknown> }; channels: string[] }>(
      `select m.key, m.payload, array_agg(d.channel order by d.channel) as channels
       from notify_messages m join notify_deliveries d on d.message_id = m.id group by m.id, m.key, m.payload order by m.key`,
    );
    expect(stored.map((m) => [m.key, m.channels])).toEqual(expected.map((k) => [k, ['finance-hook']]));
    const first = stored[0]!.payload;
    expect(first.subject).toBe('Spend spike on 2025-05-20: tag team ml, 74.4 EUR (55.86%)');
    expect(first.text).toContain(`- instance a3 in 380101-38, ${H100}: appeared; +3.10/h x 24 h = +74.40 EUR`);
    expect(first.data).toMatchObject({ type: 'anomaly', grouping: 'tag:team', group: 'ml', currency: 'EUR', kind: 'spike' });
    // Once: a second check (another replica, the next run) enqueues nothing.
    expect(await enqueueAnomalyAlerts(ctx, enqueueMessage, { fromDay: '2025-05-01' })).toEqual([]);
    // Nothing for groupings without opt-in.
    const sent: OutgoingMessage[] = [];
    expect(await enqueueAnomalyAlerts({ db, config: anomalyConfig(), now: NOW }, async (_q, m) => void sent.push(m), { fromDay: '2025-05-01' })).toEqual([]);
    expect(sent).toEqual([]);
  });

  it('explains exactly the same once the snapshots are folded into versions (which instances changed, read from the versions)', async () => {
    // Folding changes no data version (the same rows): every request computes afresh here.
    reportCache.configure({ ttlMs: 0 });
    onTestFinished(() => reportCache.configure({ ttlMs: DEFAULT_CACHE_OPTIONS.ttlMs }));
    const queries = ['by=tag:team&from=2025-05-01&to=2025-05-31', 'by=project&from=2025-05-17&to=2025-05-24'];
    const strip = (body: AnomalyJson & { generated_at?: unknown }) => ({ ...body, generated_at: undefined });
    const staged = await Promise.all(queries.map(async (q) => strip(await json(q))));
    expect(staged[0]!.rows.some((r) => r.lines.length > 0)).toBe(true);
    // As collections leave them: every complete instance snapshot folded, oldest first per scope.
    const snaps = await db.query<{ id: number; scope_key: string; taken_at: Date }>(
      `select id, scope_key, taken_at from snapshots where kind = 'instance' and complete and not versioned order by taken_at, id`,
    );
    for (const s of snaps) {
      const folded = await db.transaction((tx) => foldSnapshot(tx, { id: s.id, kind: 'instance', scopeKey: s.scope_key, takenAt: s.taken_at }));
      expect(folded.folded).toBe(true);
    }
    expect(await Promise.all(queries.map(async (q) => strip(await json(q))))).toEqual(staged);
  });

  it('stores after a run the explanations shown by default, and reads them only while the inputs they came from hold', async () => {
    // Storing explanations changes no data version: every request computes afresh here.
    reportCache.configure({ ttlMs: 0 });
    onTestFinished(() => reportCache.configure({ ttlMs: DEFAULT_CACHE_OPTIONS.ttlMs }));
    const strip = (body: AnomalyJson & { generated_at?: unknown }) => ({ ...body, generated_at: undefined });
    const defaults = config.anomalies.groupings.map((g) => `by=${encodeURIComponent(g)}&limit=500`);
    const live = await Promise.all(defaults.map(async (q) => strip(await json(q))));
    const flagged = live.flatMap((body) => body.rows.filter((r) => r.kind !== 'data gap'));
    expect(flagged.length).toBeGreaterThan(4);
    expect(await db.query('select 1 from anomaly_explanations')).toEqual([]);

    // What the service runs after each collection run.
    await workAfterRun({ db, config, logger: silentLogger() })(NOW);
    const stored = await db.query<{ dimension: string; group_value: string; day: string }>('select dimension, group_value, day::text from anomaly_explanations');
    expect(stored).toHaveLength(flagged.length);
    // Stored once: the next run finds every explanation's inputs unchanged.
    expect(await storeExplanations(db, NOW, explanationSource({ db, config, now: NOW }))).toEqual({ explained: 0, kept: flagged.length });
    // Read back, they are what the report explained live, to the last field.
    expect(await Promise.all(defaults.map(async (q) => strip(await json(q))))).toEqual(live);

    // The report reads the stored row (marked here) rather than explaining the day again...
    const markStored = () =>
      db.execute(
        `update anomaly_explanations set explanation = jsonb_set(explanation, '{lines,0,text}', '"(stored)"')
          where dimension = 'tag:team' and group_value = 'ml' and day = '2025-05-20'`,
      );
    // A complete instance snapshot of scope S taken at `at`, holding these instances, rolled up as a collection does.
    const addSnapshot = async (at: Date, rows: Array<[string, string, string]>) => {
      const id = await snapshot(db, await run(db, at), 'instance', S, at);
      await bulkInsert(db, instancesKept, rows.map(([name, flavor, team]) => ({ snapshotId: id, ...instance(S, name, flavor, team, true) })));
      await computeCostRollups(db, id);
    };
    await markStored();
    const marked = find(await json('by=tag:team&from=2025-05-20&to=2025-05-20'), '2025-05-20', 'ml')!;
    expect(marked.explanation_lines).toContain('(stored)');

    // ...until its inputs change: a late snapshot of 05-20 noon with the same rows prices the day
    // in two pieces (same figures), so the day is explained live again.
    await addSnapshot(new Date('2025-05-20T12:00:00Z'), [
      ['a1', H100, 'ml'], ['a2', A100, 'ml'], ['a3', H100, 'ml'], ['w1', L40S, 'web'], ['t1', CHEAP, 'tiny'], ['t2', CHEAP, 'tiny'],
    ]);
    const again = find(await json('by=tag:team&from=2025-05-20&to=2025-05-20'), '2025-05-20', 'ml')!;
    expect(again.explanation_lines).not.toContain('(stored)');
    expect(again.lines.map((l) => [l.resource_id, l.change, dec(l.impact)])).toEqual([['a3', 'appeared', 74.4]]);
    // The next run stores the day anew from its new inputs.
    expect((await storeExplanations(db, NOW, explanationSource({ db, config, now: NOW }))).explained).toBeGreaterThan(0);

    // A snapshot backfilled at 05-19 noon, with a3 already there, prices nothing of 05-20 (the
    // 05-20 snapshots hold all of it) but is now the one before the day: a3 no longer appears on
    // 05-20, and the stored explanation that says it did must not be shown.
    await markStored();
    await addSnapshot(new Date('2025-05-19T12:00:00Z'), [['a1', H100, 'ml'], ['a2', A100, 'ml'], ['a3', H100, 'ml'], ['w1', L40S, 'web'], ['t1', CHEAP, 'tiny']]);
    const after = find(await json('by=tag:team&from=2025-05-20&to=2025-05-20'), '2025-05-20', 'ml');
    expect(after?.explanation_lines ?? []).not.toContain('(stored)');
    expect((after?.lines ?? []).map((l) => l.resource_id)).not.toContain('a3');
  });
});
