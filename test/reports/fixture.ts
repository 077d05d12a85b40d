/**
 * A small known dataset for the report tests, inserted straight into the tables. Every amount the
 * tests assert is computed by hand from what is written here (see the comments).
 *
 * Two scopes:
 * - p1-r1 (project 1, region 1), priced in EUR: flavors g-a100 2.50/h, g-h100 4.00/h, g-hidden
 *   (price hidden: unpriced).
 * - p2-r2 (project 2, region 2), priced in USD: g-a100 3.00/h.
 *
 * Instance snapshots (UTC): TP = 03-09 23:00 (p1-r1 only), T0 = 03-10 10:00, T1 = 11:00,
 * T2 = 16:00, T3 = 17:00; NOW = 17:30. T1 -> T2 is a 5 h gap, longer than the 2 h cap.
 * Cluster and Kubernetes snapshots of p1-r1 at T0 and T3 only (7 h apart: capped at 2 h for
 * clusters, within the 12 h cap of Kubernetes prices).
 *
 * p1-r1 instances:
 *   i1 train-1   ACTIVE  g-a100  {team: ml, cost.center: cc/1}            TP, T0, T1, T2, T3 (T3 adds env: prod)
 *   i2 train-2   ACTIVE  g-h100  {team: "ML "}   T0, T1; SHUTOFF at T2, T3 (stopped: costs 0)
 *   i3 idle-1    SHUTOFF g-h100  {team: web}                                T0..T3
 *   i4 mystery   ACTIVE  g-hidden {}  (unpriced)                             T0..T3
 *   i5 untagged  ACTIVE  no flavor_name, flavor_id f-a100 (priced by id)     T0..T3
 *   i6 temp-1    ACTIVE  g-a100  {team: ml}                                  T0, T1 (removed at T2)
 *   i7 new-1     ACTIVE  g-a100  {team: data}                                T2, T3 (added at T2)
 * p2-r2 instances (T0..T3):
 *   j1 web-1     ACTIVE  g-a100 (USD 3.00) {team: web, "ünï code/x": ü} (keys as the collector stores them: lower case)
 *   j2 odd       ACTIVE  g-zzz (no such flavor: unpriced) {}
 * p1-r1 cluster bm-1 (g-a100, {team: ml}): servers s1, s2 ACTIVE, s3 SHUTOFF -> 2 x 2.50 = 5.00/h.
 * p1-r1 Kubernetes cluster k8s-prod: EUR 1.20/h, 876/month.
 */
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { computeCostRollups } from '../../src/costing/derive/rollups.js';
import { collectionRuns, freeFeatures, gpuClusterServers, gpuClusters, gpuFlavors, imageTags, instancePorts, instances, k8sClusterPrices, keypairs, snapshots, storageSshKeys, type SnapshotKind, freeFeaturesKept, gpuClustersKept, imageTagsKept, instancePortsKept, instancesKept, k8sClusterPricesKept, keypairsKept, storageSshKeysKept, gpuClusterServersKept, gpuFlavorsKept } from '../../src/db/schema.js';

export const TP = new Date('2025-03-09T23:00:00Z');
export const T0 = new Date('2025-03-10T10:00:00Z');
export const T1 = new Date('2025-03-10T11:00:00Z');
export const T2 = new Date('2025-03-10T16:00:00Z');
export const T3 = new Date('2025-03-10T17:00:00Z');
export const NOW = new Date('2025-03-10T17:30:00Z');

export const SCOPE_A = { scopeKey: 'p1-r1', projectId: 1, regionId: 1 };
export const SCOPE_B = { scopeKey: 'p2-r2', projectId: 2, regionId: 2 };
type Scope = typeof SCOPE_A;

export interface Seeded {
  runs: Record<string, number>;
  /** Snapshot ids by `${kind}@${scope}@${iso time}`. */
  snapshots: Map<string, number>;
}

async function run(db: Database, at: Date, status: 'succeeded' | 'partial' | 'failed', errors: unknown[] = []): Promise<number> {
  const rows = await db.query<{ id: number }>(
    `insert into collection_runs (trigger, collectors, started_at, finished_at, heartbeat_at, status, counts, errors, runner_id)
     values ('schedule', '{instances,clusters,flavors,k8s_prices}', $1, $2, $2, $3, '{"instance": 9}', $4::jsonb, 'test') returning id`,
    [at, new Date(at.getTime() + 60_000), status, JSON.stringify(errors)],
  );
  return rows[0]!.id;
}

async function snapshot(db: Database, seeded: Seeded, runId: number, kind: SnapshotKind, scope: Scope | null, at: Date, complete = true): Promise<number> {
  const [row] = await db.db
    .insert(snapshots)
    .values({
      runId,
      kind,
      scopeKey: scope?.scopeKey ?? 'global',
      projectId: scope?.projectId ?? null,
      regionId: scope?.regionId ?? null,
      takenAt: at,
      complete,
      rowCount: 0,
    })
    .returning({ id: snapshots.id });
  seeded.snapshots.set(`${kind}@${scope?.scopeKey ?? 'global'}@${at.toISOString()}`, row!.id);
  return row!.id;
}

interface InstanceSpec {
  id: string;
  name: string;
  status: 'ACTIVE' | 'SHUTOFF';
  flavorName: string | null;
  flavorId: string;
  tags: Record<string, string>;
}

function instancesAt(scope: Scope, at: Date): InstanceSpec[] {
  const t = at.getTime();
  if (scope === SCOPE_B) {
    if (t === TP.getTime()) return [];
    return [
      { id: 'j1', name: 'web-1', status: 'ACTIVE', flavorName: 'g-a100', flavorId: 'f-a100', tags: { team: 'web', 'ünï code/x': 'ü' } },
      { id: 'j2', name: 'odd', status: 'ACTIVE', flavorName: 'g-zzz', flavorId: 'f-zzz', tags: {} },
    ];
  }
  const late = t >= T2.getTime();
  const i1: InstanceSpec = {
    id: 'i1',
    name: 'train-1',
    status: 'ACTIVE',
    flavorName: 'g-a100',
    flavorId: 'f-a100',
    tags: t === T3.getTime() ? { team: 'ml', 'cost.center': 'cc/1', env: 'prod' } : { team: 'ml', 'cost.center': 'cc/1' },
  };
  if (t === TP.getTime()) return [i1];
  return [
    i1,
    { id: 'i2', name: 'train-2', status: late ? 'SHUTOFF' : 'ACTIVE', flavorName: 'g-h100', flavorId: 'f-h100', tags: { team: 'ML ' } },
    { id: 'i3', name: 'idle-1', status: 'SHUTOFF', flavorName: 'g-h100', flavorId: 'f-h100', tags: { team: 'web' } },
    { id: 'i4', name: 'mystery', status: 'ACTIVE', flavorName: 'g-hidden', flavorId: 'f-hidden', tags: {} },
    { id: 'i5', name: 'untagged', status: 'ACTIVE', flavorName: null, flavorId: 'f-a100', tags: {} },
    ...(late
      ? [{ id: 'i7', name: 'new-1', status: 'ACTIVE' as const, flavorName: 'g-a100', flavorId: 'f-a100', tags: { team: 'data' } }]
      : [{ id: 'i6', name: 'temp-1', status: 'ACTIVE' as const, flavorName: 'g-a100', flavorId: 'f-a100', tags: { team: 'ml' } }]),
  ];
}

async function insertInstances(db: Database, snapshotId: number, scope: Scope, at: Date): Promise<void> {
  const specs = instancesAt(scope, at);
  await bulkInsert(
    db,
    instancesKept,
    specs.map((s) => ({
      snapshotId,
      instanceId: s.id,
      name: s.name,
      status: s.status,
      vmState: s.status === 'ACTIVE' ? 'active' : 'stopped',
      flavorId: s.flavorId,
      flavorName: s.flavorName,
      vcpus: 8,
      ram: 65536,
      projectId: scope.projectId,
      regionId: scope.regionId,
      region: `region-${scope.regionId}`,
      createdAt: new Date('2025-03-01T00:00:00Z'),
      sshKeyName: 'deploy',
      tags: s.tags,
      tagsOriginal: Object.entries(s.tags).map(([key, value]) => ({ key, value, read_only: false })),
      raw: { id: s.id, name: s.name },
    })),
  );
}

async function insertFlavors(db: Database, snapshotId: number, scope: Scope): Promise<void> {
  const usd = scope === SCOPE_B;
  const rows = usd
    ? [{ flavorId: 'f-a100', flavorName: 'g-a100', currencyCode: 'USD', pricePerHour: '3.00', pricePerMonth: '2190', capacity: 4, disabled: false }]
    : [
        { flavorId: 'f-a100', flavorName: 'g-a100', currencyCode: 'EUR', pricePerHour: '2.50', pricePerMonth: '1825', capacity: 3, disabled: false },
        { flavorId: 'f-h100', flavorName: 'g-h100', currencyCode: 'EUR', pricePerHour: '4.00', pricePerMonth: '2920', capacity: 0, disabled: false },
        { flavorId: 'f-hidden', flavorName: 'g-hidden', currencyCode: null, pricePerHour: null, pricePerMonth: null, capacity: 1, disabled: false },
        { flavorId: 'f-old', flavorName: 'g-old', currencyCode: 'EUR', pricePerHour: '0.90', pricePerMonth: '657', capacity: 0, disabled: true },
      ];
  await bulkInsert(
    db,
    gpuFlavorsKept,
    rows.map((r) => ({
      snapshotId,
      ...r,
      priceStatus: r.pricePerHour === null ? 'hide' : 'show',
      resourceClass: 'bm-gpu',
      hardware: { gpu: '8x A100' },
      projectId: scope.projectId,
      regionId: scope.regionId,
      raw: { flavor_id: r.flavorId },
    })),
  );
}

async function insertCluster(db: Database, snapshotId: number): Promise<void> {
  await bulkInsert(db, gpuClustersKept, [
    {
      snapshotId,
      clusterId: 'c1',
      clusterName: 'bm-1',
      clusterStatus: 'ACTIVE',
      flavorName: 'g-a100',
      imageId: 'img-1',
      imageName: 'ubuntu',
      projectId: 1,
      regionId: 1,
      region: 'region-1',
      createdAt: new Date('2025-02-01T00:00:00Z'),
      serverCount: 3,
      tags: { team: 'ml' },
      raw: { cluster_id: 'c1' },
    },
  ]);
  await bulkInsert(
    db,
    gpuClusterServersKept,
    (['s1', 's2', 's3'] as const).map((id) => ({
      snapshotId,
      clusterId: 'c1',
      serverId: id,
      name: `bm-1-${id}`,
      status: id === 's3' ? 'SHUTOFF' : 'ACTIVE',
      vmState: id === 's3' ? 'stopped' : 'active',
      flavorName: 'g-a100',
      projectId: 1,
      regionId: 1,
      region: 'region-1',
      tags: { team: 'ml' },
      raw: { id },
    })),
  );
}

async function insertK8s(db: Database, snapshotId: number): Promise<void> {
  const item = (hour: string) => ({
    currency_code: 'EUR',
    discount_percent: '0',
    price_per_hour: hour,
    price_per_month: null,
    price_status: 'show',
    price_without_discount_per_month: null,
    tax_percent: '0',
  });
  await bulkInsert(db, k8sClusterPricesKept, [
    {
      snapshotId,
      clusterName: 'k8s-prod',
      currencyCode: 'EUR',
      pricePerHour: '1.20',
      pricePerMonth: '876',
      priceWithoutDiscountPerMonth: '900',
      discountPercent: '2.6667',
      taxPercent: '0',
      priceStatus: 'show',
      breakdown: { instances: [item('1.00'), item('0.10')], publicips: [item('0.05')], volumes: [item('0.05')] },
      projectId: 1,
      regionId: 1,
      raw: {},
    },
  ]);
}

async function insertInventoryExtras(db: Database, seeded: Seeded, runId: number, at: Date): Promise<void> {
  const ports = await snapshot(db, seeded, runId, 'port', SCOPE_A, at);
  await bulkInsert(db, instancePortsKept, [
    { snapshotId: ports, instanceId: 'i1', portId: 'port-1', name: 'eth0', securityGroups: [{ id: 'sg-1', name: 'default' }], projectId: 1, regionId: 1, raw: {} },
    { snapshotId: ports, instanceId: 'i2', portId: 'port-2', name: 'eth0', securityGroups: [], projectId: 1, regionId: 1, raw: {} },
  ]);
  const keys = await snapshot(db, seeded, runId, 'keypair', SCOPE_A, at);
  await bulkInsert(db, keypairsKept, [
    { snapshotId: keys, keypairId: 'kp-1', name: 'deploy', fingerprint: 'aa:bb', state: 'ACTIVE', sharedInProject: true, projectId: 1, regionId: 1, createdAt: new Date('2024-01-01T00:00:00Z'), raw: {} },
    { snapshotId: keys, keypairId: 'kp-2', name: '=cmd', fingerprint: 'cc:dd', state: 'ACTIVE', sharedInProject: false, projectId: 1, regionId: 1, createdAt: null, raw: {} },
  ]);
  const storage = await snapshot(db, seeded, runId, 'storage_key', null, at);
  await bulkInsert(db, storageSshKeysKept, [{ snapshotId: storage, keyId: '9007199254740993', name: 'backup', createdAt: new Date('2024-06-01T00:00:00Z'), raw: {} }]);
  const images = await snapshot(db, seeded, runId, 'image_tag', SCOPE_A, at);
  await bulkInsert(db, imageTagsKept, [
    { snapshotId: images, imageId: 'img-1', key: 'os', value: 'ubuntu', readOnly: true, projectId: 1, regionId: 1, raw: {} },
    { snapshotId: images, imageId: 'img-1', key: 'Owner.Team', value: 'ml', readOnly: false, projectId: 1, regionId: 1, raw: {} },
  ]);
  const features = await snapshot(db, seeded, runId, 'free_feature', null, at);
  await bulkInsert(db, freeFeaturesKept, [
    { snapshotId: features, activationId: '101', clientId: '7', featureId: '3', featureName: 'CDN logs', featureService: 'CDN', isFree: true, createdAt: new Date('2024-02-01T00:00:00Z'), raw: {} },
  ]);
}

/** Inserts the whole dataset, computes every rollup, and returns the ids. */
export async function seedKnownDataset(db: Database): Promise<Seeded> {
  const seeded: Seeded = { runs: {}, snapshots: new Map() };
  const flavorAt = new Date(TP.getTime() - 5 * 60_000);
  const runP = await run(db, flavorAt, 'succeeded');
  seeded.runs.TP = runP;
  for (const scope of [SCOPE_A, SCOPE_B]) await insertFlavors(db, await snapshot(db, seeded, runP, 'flavor', scope, flavorAt), scope);
  await insertInstances(db, await snapshot(db, seeded, runP, 'instance', SCOPE_A, TP), SCOPE_A, TP);

  for (const [label, at] of [['T0', T0], ['T1', T1], ['T2', T2], ['T3', T3]] as const) {
    const errors = label === 'T2' ? [{ collector: 'k8s_prices', scope: 'p1-r1', endpoint: 'GET /cloud/v2/pricing', status: 503, message: 'unavailable' }] : [];
    const runId = await run(db, at, label === 'T2' ? 'partial' : 'succeeded', errors);
    seeded.runs[label] = runId;
    for (const scope of [SCOPE_A, SCOPE_B]) await insertInstances(db, await snapshot(db, seeded, runId, 'instance', scope, at), scope, at);
    if (label === 'T0' || label === 'T3') {
      await insertCluster(db, await snapshot(db, seeded, runId, 'cluster', SCOPE_A, at));
      await insertK8s(db, await snapshot(db, seeded, runId, 'k8s_price', SCOPE_A, at));
    }
    if (label === 'T1' || label === 'T3') await insertInventoryExtras(db, seeded, runId, at);
  }
  // A failed run at 14:00 wrote nothing; an incomplete (abandoned) instance snapshot at 16:30
  // must be ignored by every report.
  seeded.runs.failed = await run(db, new Date('2025-03-10T14:00:00Z'), 'failed', [
    { collector: 'instances', scope: 'p1-r1', endpoint: 'GET /cloud/v1/securitygroups', status: null, message: 'connect ECONNREFUSED' },
  ]);
  const abandoned = await snapshot(db, seeded, seeded.runs.failed, 'instance', SCOPE_A, new Date('2025-03-10T16:30:00Z'), false);
  await bulkInsert(db, instancesKept, [
    { snapshotId: abandoned, instanceId: 'ghost', name: 'ghost', status: 'ACTIVE', flavorName: 'g-h100', projectId: 1, regionId: 1, tags: { team: 'ghost' }, raw: {} },
  ]);

  await db.execute(
    `insert into resource_presence (kind, scope_key, resource_id, name, first_seen_at, last_seen_at, gone_at)
     select 'instance', s.scope_key, i.instance_id, max(i.name), min(s.taken_at), max(s.taken_at),
       case when max(s.taken_at) < $1 then max(s.taken_at) + interval '5 hours' end
     from instances i join snapshots s on s.id = i.snapshot_id where s.complete group by s.scope_key, i.instance_id`,
    [T3],
  );

  for (const [key, id] of seeded.snapshots) {
    if (/^(instance|cluster|k8s_price)@/.test(key)) await computeCostRollups(db, id);
  }
  return seeded;
}
