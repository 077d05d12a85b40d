import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../../src/cloud/index.js';
import type { Config } from '../../../src/config/index.js';
import type { Database } from '../../../src/db/connection.js';
import type { RunError } from '../../../src/db/schema.js';
import { runCollectCommand, runCollection, type CollectorDeps } from '../../../src/collect/index.js';
import type { Simulator } from '../../../src/simulator/index.js';
import { testDatabases } from '../../helpers/databases.js';
import { startReportsApp, type ReportsApp } from '../../reports/helpers.js';
import { latestSnapshots, startTestSimulator, testClient, testConfig, testDeps } from '../helpers.js';

interface PortRow {
  instance_id: string;
  port_id: string;
  read_at: Date | null;
}

/** The port snapshot of a scope written by a run, with its rows and unread instances. */
async function portSnapshotOf(db: Database, runId: number, scopeKey: string) {
  const [snapshot] = await db.query<{ id: number; taken_at: Date; complete: boolean }>(
    `SELECT id, taken_at, complete FROM snapshots WHERE run_id = $1 AND kind = 'port' AND scope_key = $2`,
    [runId, scopeKey],
  );
  if (!snapshot) throw new Error(`run ${runId} wrote no port snapshot of ${scopeKey}`);
  const rows = await db.query<PortRow & Record<string, unknown>>('SELECT instance_id, port_id, read_at FROM instance_ports WHERE snapshot_id = $1 ORDER BY port_id', [snapshot.id]);
  const unread = await db.query<{ instance_id: string; status: number | null; error: string }>(
    'SELECT instance_id, status, error FROM unread_instance_ports WHERE snapshot_id = $1',
    [snapshot.id],
  );
  return { ...snapshot, rows, unread };
}

export function unreadPortsSuite(): void {
  describe.each(testDatabases())('ports of an instance that cannot be read ($name)', ({ open }) => {
    let sim: Simulator;
    let config: Config;
    let client: CloudClient;
    let db: Database;
    let deps: CollectorDeps;
    let app: ReportsApp;
    let scopeKey: string;
    let target: string;
    let run1: { runId: number; takenAt: Date; ports: string[] };

    beforeAll(async () => {
      sim = await startTestSimulator({ seed: 29 });
      config = testConfig();
      client = testClient(sim, config);
      db = await open();
      deps = testDeps(db, sim, client, config);
      const first = await runCollection(deps, { collectors: ['instances', 'ports'] });
      expect(first.status).toBe('succeeded');
      const [row] = await db.query<{ scope_key: string; instance_id: string }>(
        `SELECT s.scope_key, p.instance_id FROM instance_ports p JOIN snapshots s ON s.id = p.snapshot_id
          WHERE s.run_id = $1 ORDER BY s.scope_key, p.instance_id LIMIT 1`,
        [first.runId],
      );
      scopeKey = row!.scope_key;
      target = row!.instance_id;
      const snapshot = await portSnapshotOf(db, first.runId, scopeKey);
      run1 = { runId: first.runId, takenAt: snapshot.taken_at, ports: snapshot.rows.filter((r) => r.instance_id === target).map((r) => r.port_id) };
      app = await startReportsApp(() => ({ db, config, now: new Date() }));
    });
    afterAll(async () => {
      await app?.close();
      await db?.close();
      await client?.close();
      await sim?.close();
    });

    const failPortsOf = (instanceId: string, count: number) =>
      sim.injectFaults({ match: { path: new RegExp(`/instances/\\d+/\\d+/${instanceId}/ports`) }, kind: 'status', status: 503, count });

    it('keeps the scope\'s snapshot, records the instance as unread and carries its last known ports (run succeeded, with a warning)', async () => {
      // The collector asks a failed instance a second time at the end of the scope, each time with
      // all the client's attempts; four rounds' worth: this run and the next one both fail to read it.
      failPortsOf(target, 4 * (config.client.maxRetries + 1));
      const out = new PassThrough();
      let printed = '';
      out.on('data', (chunk: Buffer) => (printed += chunk.toString('utf8')));
      expect(await runCollectCommand(deps, { out, collectors: ['instances', 'ports'] })).toBe(0);
      const [run] = await db.query<{ id: number; status: string; errors: RunError[] }>('SELECT id, status, errors FROM collection_runs ORDER BY id DESC LIMIT 1');
      expect(run!.status).toBe('succeeded');
      expect(run!.errors).toEqual([
        expect.objectContaining({ collector: 'ports', scope: scopeKey, status: 503, cause: 'server', severity: 'warning', message: expect.stringMatching(/^ports of 1 of \d+ instance\(s\) could not be read/) }),
      ]);
      expect(printed).toMatch(/warnings \(1\):\n {2}ports p\d+-r\d+: GET \/cloud\/v1\/instances\/.+\/ports 503: ports of 1 of/);

      const snapshot = await portSnapshotOf(db, run!.id, scopeKey);
      expect(snapshot.complete).toBe(true);
      expect(snapshot.unread).toEqual([{ instance_id: target, status: 503, error: expect.stringMatching(/answered 503 after 4 attempts/) }]);
      const carried = snapshot.rows.filter((r) => r.instance_id === target);
      expect(carried.map((r) => r.port_id)).toEqual(run1.ports);
      for (const r of carried) expect(r.read_at?.toISOString()).toBe(run1.takenAt.toISOString());
      expect(snapshot.rows.filter((r) => r.instance_id !== target && r.read_at !== null)).toEqual([]);

      // Neither seen now nor gone.
      const presence = await db.query<{ last_seen_at: Date; gone_at: Date | null }>(
        `SELECT last_seen_at, gone_at FROM resource_presence_seen WHERE kind = 'port' AND scope_key = $1 AND resource_id = ANY($2::text[])`,
        [scopeKey, run1.ports],
      );
      expect(presence).toHaveLength(run1.ports.length);
      for (const p of presence) {
        expect(p.gone_at).toBeNull();
        expect(p.last_seen_at.toISOString()).toBe(run1.takenAt.toISOString());
      }
    });

    it('shows the last known ports in the inventory, marked with their age, and none of them as removed', async () => {
      const inventory = (await (await fetch(`${app.base}/api/reports/inventory?kind=ports&q=${target}`)).json()) as {
        rows: Array<{ resource_id: string; read_at: string; last_known: string | null }>;
        notes: string[];
      };
      expect(inventory.rows.map((r) => r.resource_id).sort()).toEqual([...run1.ports].sort());
      for (const r of inventory.rows) {
        expect(r.read_at).toBe(run1.takenAt.toISOString());
        expect(r.last_known).toMatch(/^yes: read \d+ min ago$/);
      }
      expect(inventory.notes.join(' ')).toContain('The ports of 1 instance(s) could not be read in the latest collection');
      const html = await (await fetch(`${app.base}/reports/inventory?kind=ports&q=${target}`)).text();
      expect(html).toContain('Last known (not read in the latest collection)');
      const changes = (await (await fetch(`${app.base}/api/reports/changes?kind=ports&change=removed&hours=1`)).json()) as { rows: unknown[] };
      expect(changes.rows).toEqual([]);
    });

    it('carries them again with their first read time while the instance stays unread, and reads them fresh once it answers', async () => {
      const second = await runCollection(deps, { collectors: ['instances', 'ports'] });
      expect(second.status).toBe('succeeded');
      const again = await portSnapshotOf(db, second.runId, scopeKey);
      expect(again.unread.map((u) => u.instance_id)).toEqual([target]);
      for (const r of again.rows.filter((x) => x.instance_id === target)) expect(r.read_at?.toISOString()).toBe(run1.takenAt.toISOString());

      const third = await runCollection(deps, { collectors: ['instances', 'ports'] });
      expect(third.errors).toEqual([]);
      const fresh = await portSnapshotOf(db, third.runId, scopeKey);
      expect(fresh.unread).toEqual([]);
      expect(fresh.rows.filter((r) => r.read_at !== null)).toEqual([]);
      expect(fresh.rows.filter((r) => r.instance_id === target).map((r) => r.port_id)).toEqual(run1.ports);
      const presence = await db.query<{ last_seen_at: Date }>(
        `SELECT last_seen_at FROM resource_presence_seen WHERE kind = 'port' AND scope_key = $1 AND resource_id = ANY($2::text[])`,
        [scopeKey, run1.ports],
      );
      for (const p of presence) expect(p.last_seen_at.getTime()).toBe(fresh.taken_at.getTime());
    });

    it('reads an instance whose failures outlast one round of retries but not the second round', async () => {
      const other = (await db.query<{ instance_id: string }>(
        `SELECT instance_id FROM instances i JOIN snapshots s ON s.id = i.snapshot_id
          WHERE s.kind = 'instance' AND s.scope_key = $1 AND i.instance_id <> $2 ORDER BY i.instance_id LIMIT 1`,
        [scopeKey, target],
      ))[0]!.instance_id;
      failPortsOf(other, config.client.maxRetries + 1);
      sim.clearRequestLog();
      const run = await runCollection(deps, { collectors: ['instances', 'ports'] });
      expect(run.errors).toEqual([]);
      const asked = sim.requestLog.filter((r) => r.path.endsWith(`/${other}/ports`)).map((r) => r.status);
      expect(asked).toEqual([...Array(config.client.maxRetries + 1).fill(503), 200]);
      const snapshot = await portSnapshotOf(db, run.runId, scopeKey);
      expect(snapshot.unread).toEqual([]);
      const fresh = snapshot.rows.filter((r) => r.instance_id === other);
      expect(fresh.length).toBeGreaterThan(0);
      for (const r of fresh) expect(r.read_at).toBeNull();
    });

    it('fails the scope when the key is refused (401), keeping the previous port snapshot the latest', async () => {
      const before = (await latestSnapshots(db)).get(`port/${scopeKey}`);
      sim.injectFaults({ match: { path: new RegExp(`/instances/\\d+/\\d+/${target}/ports`) }, kind: 'status', status: 401, count: 1 });
      const run = await runCollection(deps, { collectors: ['ports'] });
      expect(run.status).toBe('partial');
      expect(run.errors).toEqual([expect.objectContaining({ collector: 'ports', scope: scopeKey, status: 401, cause: 'auth' })]);
      expect((await latestSnapshots(db)).get(`port/${scopeKey}`)).toBe(before);
    });
  });

  describe.each(testDatabases())('ports under 15% 5xx and 429 bursts ($name)', ({ open }) => {
    let sim: Simulator;
    let client: CloudClient;
    let db: Database;

    beforeAll(async () => {
      sim = await startTestSimulator({ seed: 31, size: 600 });
      const config = testConfig();
      client = testClient(sim, config);
      db = await open();
    });
    afterAll(async () => {
      await db?.close();
      await client?.close();
      await sim?.close();
    });

    it('has the current ports of at least 99% of the instances in every run and marks nothing gone', async () => {
      const config = testConfig();
      const deps = testDeps(db, sim, client, config);
      expect((await runCollection(deps)).status).toBe('succeeded');
      const truth = sim.state.scopes().flatMap((s) => sim.state.instances(s.project_id, s.region_id).map((i) => i.id));
      expect(truth.length).toBeGreaterThanOrEqual(600);

      sim.setOptions({ errorRate: 0.15, rateLimit: { every: 40, burst: 3, retryAfterSeconds: 1 } });
      const measured: Array<{ run: number; status: string; current: number; unread: number }> = [];
      for (let i = 0; i < 3; i++) {
        const run = await runCollection(deps);
        const [counts] = await db.query<{ current: number; unread: number }>(
          `SELECT (SELECT count(DISTINCT p.instance_id)::int FROM instance_ports p JOIN snapshots s ON s.id = p.snapshot_id
                    WHERE s.run_id = $1 AND s.complete AND p.read_at IS NULL AND p.instance_id = ANY($2::text[])) AS current,
                  (SELECT count(*)::int FROM unread_instance_ports u JOIN snapshots s ON s.id = u.snapshot_id WHERE s.run_id = $1) AS unread`,
          [run.runId, truth],
        );
        measured.push({ run: run.runId, status: run.status, ...counts! });
        // Nothing was deleted in the simulator: nothing may be gone.
        expect(await db.query(`SELECT kind, resource_id FROM resource_presence WHERE gone_at IS NOT NULL`), `run ${run.runId}`).toEqual([]);
      }
      sim.setOptions({ errorRate: 0, rateLimit: null });
      for (const m of measured) expect(m.current / truth.length, JSON.stringify(measured)).toBeGreaterThanOrEqual(0.99);
      // Every instance is accounted for: read now, or unread with its last known ports.
      for (const m of measured) expect(m.current + m.unread, JSON.stringify(measured)).toBe(truth.length);
    });
  });
}
