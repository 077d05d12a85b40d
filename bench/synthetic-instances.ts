/**
 * Spec-shaped instance records and their collection through the snapshot writer, as the
 * instances collector writes them: shared by the history and storage benchmarks.
 */
import { performance } from 'node:perf_hooks';
import { openSnapshot } from '../src/collect/snapshot-writer.js';
import { prepareBulkCopy } from '../src/db/bulk.js';
import type { Database, Queryable } from '../src/db/connection.js';
import { instances } from '../src/db/schema.js';
import { secs as secsOf } from './measure.js';

const secs = (n: number) => secsOf(n, 2);

export const PAGE = 1_000;
export const T0 = new Date('2025-01-01T00:00:00Z');

export type InstanceRow = typeof instances.$inferInsert;

/** A spec-shaped instance record (4 tags, addresses, flavor, volumes): ~1.3 KB of raw JSON. */
export function instanceRow(scope: number, n: number, version: number): Omit<InstanceRow, 'snapshotId'> {
  const id = `p${scope}-i${String(n).padStart(7, '0')}`;
  const tags = { team: ['ml', 'web', 'data', 'infra'][n % 4]!, env: ['prod', 'dev'][n % 2]!, 'cost.center': `cc-${n % 13}`, rev: String(version) };
  const raw = {
    id,
    name: `vm-${n}`,
    description: null,
    status: 'ACTIVE',
    vm_state: 'active',
    task_state: null,
    flavor: { flavor_id: `f-${n % 8}`, flavor_name: `g${n % 8}-large`, vcpus: 8, ram: 65536, disk: 100, gpu: n % 8 === 0 ? 'A100' : null },
    addresses: { private: [{ addr: `10.${scope}.${(n >> 8) & 255}.${n & 255}`, type: 'fixed', version: 4, mac: '00:16:3e:aa:bb:cc' }] },
    metadata: { image_id: 'img-ubuntu-22.04', os_distro: 'ubuntu', os_version: '22.04', created_by: 'terraform' },
    tags: Object.entries(tags).map(([key, value]) => ({ key, value, read_only: false })),
    volumes: [{ id: `vol-${id}`, name: `root-${n}`, size: 100, volume_type: 'ssd', bootable: true }],
    security_groups: [{ name: 'default' }],
    keypair_name: `key-${n % 5}`,
    created_at: '2024-11-01T10:00:00Z',
    region: `region-${scope}`,
    project_id: scope,
  };
  return {
    instanceId: id,
    name: `vm-${n}`,
    status: 'ACTIVE',
    vmState: 'active',
    flavorId: `f-${n % 8}`,
    flavorName: `g${n % 8}-large`,
    vcpus: 8,
    ram: 65536,
    projectId: scope,
    regionId: scope,
    region: `region-${scope}`,
    createdAt: new Date('2024-11-01T10:00:00Z'),
    sshKeyName: `key-${n % 5}`,
    securityGroupIds: ['sg-default'],
    securityGroupNames: ['default'],
    volumeCount: 1,
    tags,
    tagsReadOnly: [],
    tagsOriginal: raw.tags,
    raw,
  };
}

/** One collection of every scope through the snapshot writer; `version(n)` gives each instance's content. */
export async function collect(
  db: Database,
  o: { instances: number; scopes: number },
  takenAt: Date,
  version: (n: number) => number,
  profiled = false,
): Promise<{ copyMs: number; finaliseMs: number; rows: number; profile: string }> {
  const perScope = Math.ceil(o.instances / o.scopes);
  const spent = new Map<string, number>();
  const target = profiled ? timedStatements(db, spent) : db;
  let copyMs = 0;
  let finaliseMs = 0;
  let rows = 0;
  for (let scope = 1; scope <= o.scopes; scope++) {
    const writer = await openSnapshot(target, { runId: null, kind: 'instance', scopeKey: `p${scope}-r${scope}`, projectId: scope, regionId: scope, takenAt });
    for (let start = 0; start < perScope; start += PAGE) {
      const page: InstanceRow[] = [];
      for (let n = start; n < Math.min(start + PAGE, perScope); n++) page.push({ snapshotId: writer.id, ...instanceRow(scope, n, version(n)) });
      const prepared = writer.prepare(instances, page);
      const t = performance.now();
      rows += await writer.write(prepared);
      copyMs += performance.now() - t;
    }
    const t = performance.now();
    await writer.finalise();
    finaliseMs += performance.now() - t;
  }
  await db.execute('VACUUM instances_staged');
  const profile = [...spent].map(([what, ms]) => `${what} ${secs(ms)}`).join(', ');
  return { copyMs, finaliseMs, rows, profile };
}

/** The database with the time of each finalising statement added up by its first words (`spent`). */
export function timedStatements(db: Database, spent: Map<string, number>): Database {
  const label = (sql: string) => {
    const words = sql.replace(/\s+/g, ' ').trim().split(' ');
    const table = words.find((w, i) => i > 0 && /^(INTO|UPDATE|FROM|ANALYZE)$/i.test(words[i - 1]!)) ?? '';
    return `${words[0]!.toLowerCase()} ${table.replace(/"/g, '')}`.trim();
  };
  const timed = <T>(sql: string, run: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    return run().finally(() => spent.set(label(sql), (spent.get(label(sql)) ?? 0) + performance.now() - t));
  };
  const wrap = (q: Queryable): Queryable =>
    new Proxy(q, {
      get(target, prop, receiver) {
        if (prop === 'execute' || prop === 'query') {
          return (sql: string, ...rest: unknown[]) =>
            timed(sql, () => (Reflect.get(target, prop, receiver) as (...a: unknown[]) => Promise<unknown>).call(target, sql, ...rest));
        }
        if (prop === 'transaction' && 'transaction' in target) {
          return <T>(fn: (tx: Queryable) => Promise<T>) => (target as Database).transaction((tx) => fn(wrap(tx)));
        }
        return Reflect.get(target, prop, receiver);
      },
    });
  return wrap(db) as Database;
}


/**
 * COPY of one collection's rows (every instance's first content) into `plain_copy`, a table of
 * the staging table's shape made by the caller: the storage without versions, no fold. Timed.
 */
export async function copyPlain(db: Database, o: { instances: number; scopes: number }): Promise<number> {
  const perScope = Math.ceil(o.instances / o.scopes);
  let ms = 0;
  for (let scope = 1; scope <= o.scopes; scope++) {
    for (let start = 0; start < perScope; start += PAGE) {
      const page: InstanceRow[] = [];
      for (let n = start; n < Math.min(start + PAGE, perScope); n++) page.push({ snapshotId: 0, ...instanceRow(scope, n, 0) });
      const copied = prepareBulkCopy(instances, page);
      const t = performance.now();
      for (const part of copied.parts) await db.copyFrom(part.into.replace('"instances_staged"', 'plain_copy'), part.data);
      ms += performance.now() - t;
    }
  }
  return ms;
}
