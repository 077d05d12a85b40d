import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateIdleRules, executeStop, localTime, parseExpiry, scheduleStops, type IdleSubject } from '../../src/actions/index.js';
import { addDecimal } from '../../src/read-models/decimal.js';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import { idleReport, type IdleParams } from '../../src/reports/idle.js';
import { IDLE_SORTS, queryIdleCandidates } from '../../src/read-models/idle-candidates.js';
import { refreshCurrentInstances } from '../../src/costing/derive/current-instances.js';
import { idleTagExtraction } from '../../src/read-models/idle-rules-sql.js';
import { IDLE_RULES } from '../../src/read-models/idle-rules.js';
import type { Config } from '../../src/config/index.js';
import type { Row } from '../../src/reports/report.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { clientOf, seedFromSimulator, SIM_NOW, startTestSimulator, testConfig } from './helpers.js';

const NOW = new Date('2024-05-17T10:30:00Z'); // a Friday
const DAY = 86_400_000;

const subject = (over: Partial<IdleSubject> = {}): IdleSubject => ({
  createdAt: new Date(NOW.getTime() - 5 * DAY),
  tags: { owner: 'ana@example.com' },
  securityGroupIds: ['sg-1'],
  securityGroupNames: ['default'],
  clusterName: null,
  clusterTaskStatus: null,
  ...over,
});

describe('idle rules', () => {
  const config = testConfig({
    idle_rules: {
      no_owner: { min_running_days: 30 },
      expired: { tag_key: 'Expires' },
      off_hours: { timezone: 'Europe/Berlin', working_hours: { start: '08:00', end: '20:00' } },
      quarantine: { security_groups: ['sg-quarantine', 'quarantine'] },
    },
  });
  const rulesOf = (s: IdleSubject, now = NOW) => evaluateIdleRules(s, config, now).map((m) => m.rule);

  it('matches nothing on a young, owned, untagged instance', () => {
    expect(evaluateIdleRules(subject(), config, NOW)).toEqual([]);
  });

  it('flags long-running instances without an owner, saying for how long', () => {
    const old = subject({ createdAt: new Date(NOW.getTime() - 40 * DAY - 3600_000), tags: {} });
    expect(evaluateIdleRules(old, config, NOW)).toEqual([{ rule: 'no_owner', reason: 'running for 40 days (the limit is 30) with no "owner" tag' }]);
    expect(rulesOf({ ...old, tags: { owner: '  ' } })).toEqual(['no_owner']);
    expect(rulesOf({ ...old, tags: { owner: 'ana' } })).toEqual([]);
    expect(rulesOf({ ...old, createdAt: new Date(NOW.getTime() - 29 * DAY) })).toEqual([]);
    expect(rulesOf({ ...old, createdAt: null })).toEqual([]);
  });

  it('reads expiry dates in the past (the configured key, normalised), days ending at midnight UTC', () => {
    const at = (value: string) => rulesOf(subject({ tags: { owner: 'x', expires: value } }));
    expect(at('2024-05-16')).toEqual(['expired']);
    expect(at('2024-05-17')).toEqual([]); // still today
    expect(at('2024-05-17T10:00:00Z')).toEqual(['expired']);
    expect(at('2024-05-17T12:00:00+02:00')).toEqual(['expired']);
    expect(at('2024-05-17 11:00')).toEqual([]);
    expect(at('soon')).toEqual([]);
    expect(at('2024-02-30')).toEqual([]);
    expect(evaluateIdleRules(subject({ tags: { owner: 'x', expires: '2024-01-31' } }), config, NOW)[0]!.reason).toBe('tag "expires" is 2024-01-31, which has passed');
    expect(parseExpiry('2024-05-31')).toEqual(new Date('2024-06-01T00:00:00Z'));
  });

  it('flags dev/test/sandbox instances running outside working hours in the configured time zone', () => {
    const dev = subject({ tags: { owner: 'x', env: 'DEV' } });
    expect(rulesOf(dev, new Date('2024-05-17T10:30:00Z'))).toEqual([]); // Fri 12:30 in Berlin
    const evening = evaluateIdleRules(dev, config, new Date('2024-05-17T18:30:00Z')); // Fri 20:30 in Berlin
    expect(evening).toEqual([{ rule: 'off_hours', reason: 'env=DEV running outside working hours (Mon, Tue, Wed, Thu, Fri 08:00–20:00 Europe/Berlin; it is Fri 20:30 there)' }]);
    expect(rulesOf(dev, new Date('2024-05-18T10:30:00Z'))).toEqual(['off_hours']); // Saturday
    expect(rulesOf(subject({ tags: { owner: 'x', env: 'prod' } }), new Date('2024-05-18T10:30:00Z'))).toEqual([]);
    // The same instant is within working hours in UTC.
    const utc = testConfig({ idle_rules: { off_hours: { timezone: 'UTC' } } });
    expect(evaluateIdleRules(dev, utc, new Date('2024-05-17T18:30:00Z'))).toEqual([]);
    expect(localTime(new Date('2024-03-31T01:30:00Z'), 'Europe/Berlin')).toEqual({ weekday: 7, time: '03:30' }); // summer time began
  });

  it('flags quarantined security groups by id or name, and servers of clusters being cleaned up', () => {
    expect(evaluateIdleRules(subject({ securityGroupIds: ['sg-quarantine'] }), config, NOW)).toEqual([{ rule: 'quarantine', reason: 'in the quarantine security group "sg-quarantine"' }]);
    expect(rulesOf(subject({ securityGroupNames: ['quarantine'] }))).toEqual(['quarantine']);
    expect(evaluateIdleRules(subject({ clusterName: 'train-a', clusterTaskStatus: 'CLUSTER_CLEAN_UP' }), config, NOW)).toEqual([
      { rule: 'cluster_clean_up', reason: 'server of cluster "train-a" whose task status is CLUSTER_CLEAN_UP' },
    ]);
  });

  it('lists every rule that matches, and none that is disabled', () => {
    const all = subject({ createdAt: new Date(NOW.getTime() - 100 * DAY), tags: { env: 'sandbox', expires: '2024-01-01' }, securityGroupIds: ['sg-quarantine'], clusterName: 'c', clusterTaskStatus: 'CLUSTER_CLEAN_UP' });
    const saturday = new Date('2024-05-18T10:30:00Z');
    expect(rulesOf(all, saturday)).toEqual(['no_owner', 'expired', 'off_hours', 'quarantine', 'cluster_clean_up']);
    const off = testConfig({ idle_rules: { no_owner: { enabled: false }, expired: { enabled: false }, off_hours: { enabled: false }, quarantine: { enabled: false, security_groups: ['sg-quarantine'] }, cluster_clean_up: { enabled: false } } });
    expect(evaluateIdleRules(all, off, saturday)).toEqual([]);
  });
});

// Every test twice: read from the snapshots, and from current_instances built after the seed
// (what the service reads once a run has rebuilt it).
const SOURCES = ['snapshots', 'current_instances'] as const;

describe.each(testDatabases().flatMap((d) => SOURCES.map((source) => ({ ...d, source }))))('idle report on $name, read from $source', ({ open, source }) => {
  const config = testConfig();
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    await seedFromSimulator(db, sim, config);
    if (source === 'current_instances') expect((await refreshCurrentInstances(db, idleTagExtraction(config)))?.rows).toBeGreaterThan(10);
  });
  afterAll(async () => {
    await client.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  const ctx = () => ({ db, config, now: SIM_NOW });
  const run = (p: IdleParams = {}) => idleReport.run(ctx(), p, { limit: 500, offset: 0 });

  it('lists running candidates with every matched rule and why, scope, age, tags and exact cost', async () => {
    const out = await run();
    expect(out.rows.length).toBeGreaterThan(3);
    expect(out.totalRows).toBe(out.rows.length);
    for (const row of out.rows) {
      expect(row.status).toBe('ACTIVE');
      expect((row.matches as unknown[]).length).toBeGreaterThan(0);
      expect(String(row.reasons)).not.toBe('');
      expect(row.ref).toBe(`${row.project_id}:${row.region_id}:${row.instance_id}`);
      const sim_ = sim.state.instance(String(row.instance_id))!;
      expect(sim_.status).toBe('ACTIVE');
      const flavor = sim.state.flavors(sim_.projectId, sim_.regionId).find((f) => f.name === sim_.flavorName);
      expect(row.price_per_hour).toBe(flavor?.pricePerHour ?? null);
    }
    // The demo's idle instances (old, no owner, past expiry) and the servers of the cluster being cleaned up.
    const rules = new Set(out.rows.flatMap((r) => String(r.rules).split(', ')));
    expect(rules).toContain('no_owner');
    expect(rules).toContain('expired');
    expect(rules).toContain('cluster_clean_up');
    const cleanUp = out.rows.filter((r) => String(r.rules).includes('cluster_clean_up'));
    expect(cleanUp.every((r) => String(r.kind).startsWith('server of '))).toBe(true);
  });

  it('totals the cost at stake per currency exactly, never mixing currencies, and counts the unpriced', async () => {
    const out = await run();
    const expected = new Map<string, { hour: string; month: string }>();
    let unpriced = 0;
    for (const row of out.rows) {
      if (row.price_per_hour === null) {
        unpriced++;
        continue;
      }
      const t = expected.get(String(row.currency)) ?? { hour: '0', month: '0' };
      expected.set(String(row.currency), { hour: addDecimal(t.hour, String(row.price_per_hour)), month: addDecimal(t.month, String(row.price_per_month)) });
    }
    const summary = Object.fromEntries(out.summary.map((s) => [s.label, s.value]));
    expect(expected.size).toBeGreaterThan(1);
    for (const [currency, t] of expected) {
      expect(summary[`At stake per hour (${currency})`]).toBe(t.hour);
      expect(summary[`At stake per month (${currency})`]).toBe(t.month);
    }
    expect(summary.Unpriced).toBe(unpriced);
    expect(summary['Idle candidates']).toBe(out.rows.length);
  });

  it('filters by rule, sorts by the cost at stake, and exports the same rows', async () => {
    const all = await run();
    const onlyCleanUp = await run({ rule: 'cluster_clean_up' });
    expect(onlyCleanUp.rows.length).toBeGreaterThan(0);
    expect(onlyCleanUp.rows.every((r) => String(r.rules).includes('cluster_clean_up'))).toBe(true);
    const priced = all.rows.filter((r) => r.price_per_hour !== null).map((r) => Number(r.price_per_hour));
    expect(priced).toEqual([...priced].sort((a, b) => b - a));
    const exported: Row[] = [];
    const file = await idleReport.export(ctx(), {});
    for await (const row of file.rows) exported.push(row);
    expect(exported.map((r) => r.ref)).toEqual(all.rows.map((r) => r.ref));
  });

  it('sorts by every sortable column both ways, nulls last, ties by reference', async () => {
    const rows = (await run()).rows;
    // Names case-insensitively, then by case (both byte-wise: the same on every database); ties by project, region, id.
    const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
    const byText = (a: string, b: string) => bytes(a.toLowerCase(), b.toLowerCase()) || bytes(a, b);
    const cases = [
      ['price_per_hour', (r: Row) => (r.price_per_hour === null ? null : Number(r.price_per_hour))],
      ['age_days', (r: Row) => r.age_days as number | null],
      ['name', (r: Row) => r.name as string | null],
      ['scheduled_stop_at', (r: Row) => r.scheduled_stop_at as string | null],
    ] as const;
    for (const [sort, value] of cases) {
      for (const dir of ['asc', 'desc'] as const) {
        const sign = dir === 'asc' ? 1 : -1;
        const expected = [...rows].sort((a, b) => {
          const x = value(a);
          const y = value(b);
          const byValue =
            x === null ? (y === null ? 0 : 1) : y === null ? -1 : typeof x === 'number' ? sign * (x - (y as number)) : sign * byText(String(x), String(y));
          return byValue || Number(a.project_id) - Number(b.project_id) || Number(a.region_id) - Number(b.region_id) || bytes(String(a.instance_id), String(b.instance_id));
        });
        const out = await idleReport.run(ctx(), { sort, dir }, { limit: 500, offset: 0 });
        expect(out.rows.map((r) => r.ref), `${sort} ${dir}`).toEqual(expected.map((r) => r.ref));
      }
    }
  });

  it('keeps the count and totals on a page past the end, and counts nothing for a rule nothing matches', async () => {
    const all = await run();
    const past = await idleReport.run(ctx(), {}, { limit: 10, offset: all.totalRows! + 5 });
    expect(past.rows).toEqual([]);
    expect(past.totalRows).toBe(all.totalRows);
    expect(past.summary).toEqual(all.summary);
    expect(past.totals).toEqual(all.totals);
    const second = await idleReport.run(ctx(), {}, { limit: 2, offset: 2 });
    expect(second.rows.map((r) => r.ref)).toEqual(all.rows.slice(2, 4).map((r) => r.ref));
    // No quarantine groups are configured: the rule matches nothing.
    const none = await run({ rule: 'quarantine' });
    expect(none.rows).toEqual([]);
    expect(none.totalRows).toBe(0);
    expect(none.totals).toEqual([]);
    expect(Object.fromEntries(none.summary.map((s) => [s.label, s.value]))).toEqual({ 'Idle candidates': 0, Unpriced: 0 });
  });

  it('drops a stopped candidate at once and shows the due time of a scheduled stop', async () => {
    const before = await run();
    const [first, second] = before.rows;
    const ref = (row: Row) => {
      const [p, r, id] = String(row.ref).split(':');
      return { projectId: Number(p), regionId: Number(r), instanceId: id! };
    };
    await executeStop({ db, client, actor: { name: 'olivia', role: 'operator' }, reason: 'idle', dryRun: false, now: () => SIM_NOW }, [ref(first!)]);
    await scheduleStops({ db, config }, { actor: { name: 'olivia', role: 'operator' }, reason: 'idle, warn first', refs: [ref(second!)], now: SIM_NOW });

    const after = await run();
    expect(after.rows.map((r) => r.ref)).not.toContain(first!.ref);
    expect(after.rows.find((r) => r.ref === second!.ref)!.scheduled_stop_at).toBe(new Date(SIM_NOW.getTime() + 24 * 3600_000).toISOString());
    expect(after.totalRows).toBe(before.totalRows! - 1);
  });

  it.runIf(source === 'current_instances')('reads current_instances exactly as the snapshots, and the snapshots while it is stale', async () => {
    const same = async (cfg: Config, label: string) => {
      for (const sort of IDLE_SORTS) {
        for (const dir of ['asc', 'desc'] as const) {
          for (const rule of [undefined, ...IDLE_RULES]) {
            const query = { sort, dir, rule, limit: 7, offset: 1 };
            const fromSnapshots = await queryIdleCandidates(db, cfg, SIM_NOW, { ...query, source: 'snapshots' });
            expect(await queryIdleCandidates(db, cfg, SIM_NOW, query), `${label} ${JSON.stringify(query)}`).toEqual(fromSnapshots);
          }
        }
      }
    };
    await same(config, 'built');
    expect(await refreshCurrentInstances(db, idleTagExtraction(config))).toBeNull();

    // Other tag keys for the rules: the extracted values no longer hold, the snapshots are read.
    const byTeam = { ...config, ownerTagKey: 'team' };
    const ownerless = async (cfg: Config) => (await queryIdleCandidates(db, cfg, SIM_NOW, { rule: 'no_owner', limit: null, offset: 0 })).count;
    expect(await ownerless(byTeam)).not.toBe(await ownerless(config));
    await same(byTeam, 'other owner tag key');

    // A newer complete instance snapshot of a scope without one of its candidates: gone at once, before and after the rebuild.
    const first = (await queryIdleCandidates(db, config, SIM_NOW, { limit: null, offset: 0 })).rows.find((r) => r.instance.kind === 'instance');
    const ref = first!.instance.ref;
    const [{ id }] = await db.query<{ id: number }>(
      `insert into snapshots (kind, scope_key, project_id, region_id, taken_at, complete)
       select kind, scope_key, project_id, region_id, taken_at + interval '1 hour', true from snapshots
        where kind = $1 and project_id = $2 and region_id = $3 order by taken_at desc limit 1 returning id`,
      ['instance', ref.projectId, ref.regionId],
    );
    await db.execute(
      `insert into instances select (x).* from (
         select jsonb_populate_record(null::instances, to_jsonb(t) || jsonb_build_object('snapshot_id', $1::int)) as x
         from instances t where t.snapshot_id = (select max(s.id) from snapshots s where s.complete and s.id <> $1 and s.kind = 'instance'
           and s.scope_key = (select scope_key from snapshots where id = $1)) and t.instance_id <> $2) r`,
      [id, ref.instanceId],
    );
    const before = Number((await db.query<{ n: number }>('select count(*)::int as n from current_instances'))[0]!.n);
    const listed = async () => (await queryIdleCandidates(db, config, SIM_NOW, { limit: null, offset: 0 })).rows.map((r) => r.instance.ref);
    expect(await listed()).not.toContainEqual(ref);
    await same(config, 'stale');
    // Only what changed is written: the one row gone.
    expect(await refreshCurrentInstances(db, idleTagExtraction(config))).toEqual({ rows: before - 1, written: 1 });
    expect(await listed()).not.toContainEqual(ref);
    await same(config, 'rebuilt');
  });
});
