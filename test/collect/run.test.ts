/**
 * The run loop (src/collect/run.ts) from the simulator into a test database: the run record and
 * summary per collector when units succeed, fail and are skipped in one run; the order of the
 * phases in its progress events; the status when nothing or everything fails; a run asked to stop
 * before it starts; and work after the run or a progress listener that cannot fail it.
 * (A whole successful collection, lasting faults and the command's exit codes: suites/*.ts;
 * stopping a run under way: service.test.ts and ops/shutdown-collection.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../src/cloud/index.js';
import { runCollection, type CollectorDeps, type ProgressEvent, type RunSummary } from '../../src/collect/index.js';
import type { Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import type { RunError } from '../../src/db/schema.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { scopeKey, startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

/** A scope the API does not know: every call about it answers 404. */
const MISSING = { projectId: 999_999, regionId: 38, securityGroups: ['5c1d0b6e-0000-4000-8000-000000000001'], k8sClusters: ['nowhere'] };
const MISSING_KEY = scopeKey(MISSING.projectId, MISSING.regionId);
const STOPPED = 'run stopped before 4 scope collection(s) started (asked to stop: shutdown or signal)';

type Scope = CollectorDeps['scopes'][number];

describe.each(testDatabases())('the collection run loop ($name)', ({ open }) => {
  let sim: Simulator;
  let config: Config;
  let client: CloudClient;
  let db: Database;
  let base: CollectorDeps;
  /** A scope with security groups and Kubernetes clusters: every collector has a unit for it. */
  let full: Scope;
  /** A real scope with nothing configured to collect for instances, ports and Kubernetes prices. */
  let bare: Scope;

  beforeAll(async () => {
    sim = await startTestSimulator({ seed: 5, size: 8 });
    config = testConfig();
    client = testClient(sim, config);
    db = await open();
    base = testDeps(db, sim, client, config);
    const withGroups = base.scopes.filter((s) => s.securityGroups.length > 0);
    full = withGroups[0]!;
    bare = { ...withGroups[1]!, securityGroups: [], k8sClusters: [] };
  });
  afterAll(async () => {
    await db?.close();
    await client?.close();
    await sim?.close();
  });

  const keyOf = (s: Scope) => scopeKey(s.projectId, s.regionId);
  const runRow = async (runId: number) =>
    (
      await db.query<{ status: string; trigger: string; collectors: string[]; counts: Record<string, number>; errors: RunError[]; runner_id: string; finished_at: Date }>(
        'SELECT status, trigger, collectors, counts, errors, runner_id, finished_at FROM collection_runs WHERE id = $1',
        [runId],
      )
    )[0]!;
  const snapshotsOf = async (runId: number) =>
    (await db.query<{ kind: string; scope_key: string; complete: boolean }>('SELECT kind, scope_key, complete FROM snapshots WHERE run_id = $1 ORDER BY kind, scope_key', [runId])).map(
      (s) => `${s.kind}/${s.scope_key}${s.complete ? '' : ' (incomplete)'}`,
    );

  describe('a run where units succeed, fail and are skipped', () => {
    let summary: RunSummary;
    const events: ProgressEvent[] = [];

    beforeAll(async () => {
      summary = await runCollection(
        { ...base, scopes: [full, bare, MISSING] },
        { trigger: 'schedule', collectors: ['ports', 'keypairs', 'instances', 'flavors'], onProgress: (e) => events.push(e) },
      );
    });

    it('is partial, with one error per failed unit naming its collector and scope', () => {
      expect(summary.status).toBe('partial');
      expect(summary.alreadyRunning).toBe(false);
      expect(summary.errors.map((e) => [e.collector, e.scope]).sort()).toEqual([
        ['flavors', MISSING_KEY],
        ['instances', MISSING_KEY],
        ['keypairs', MISSING_KEY],
        ['ports', MISSING_KEY],
      ]);
      const byCollector = new Map(summary.errors.map((e) => [e.collector, e]));
      for (const collector of ['flavors', 'instances', 'keypairs']) {
        expect(byCollector.get(collector), collector).toMatchObject({ status: 404, endpoint: expect.stringContaining(`/${MISSING.projectId}/${MISSING.regionId}`) });
      }
      // Ports read the instances of this scope's latest instance snapshot: there is none.
      expect(byCollector.get('ports')!.message).toMatch(/no complete instance snapshot/);
    });

    it('counts the units of each collector that completed, failed and were skipped, in dependency order', () => {
      expect(summary.collectors).toEqual(['flavors', 'instances', 'keypairs', 'ports']);
      expect(summary.perCollector.map((c) => [c.collector, c.scopesOk, c.scopesFailed, c.scopesSkipped])).toEqual([
        ['flavors', 2, 1, 0],
        ['instances', 1, 1, 1],
        ['keypairs', 2, 1, 0],
        ['ports', 1, 1, 1],
      ]);
      for (const c of summary.perCollector) expect(c.rows, c.collector).toBeGreaterThan(0);
      const rows = summary.perCollector.reduce((n, c) => n + c.rows, 0);
      expect(Object.values(summary.counts).reduce((n, v) => n + v, 0)).toBe(rows);
      expect(summary.counts['instance']).toBe(sim.state.instances(full.projectId, full.regionId).length);
    });

    it('records the run as its summary says, and keeps exactly the snapshots of the completed units', async () => {
      const row = await runRow(summary.runId);
      expect(row).toMatchObject({ status: 'partial', trigger: 'schedule', collectors: ['flavors', 'instances', 'keypairs', 'ports'], runner_id: 'test-runner' });
      expect(row.counts).toEqual(summary.counts);
      expect(row.errors).toEqual(JSON.parse(JSON.stringify(summary.errors)));
      expect(row.finished_at.getTime()).toBe(summary.finishedAt!.getTime());
      expect(summary.finishedAt!.getTime()).toBeGreaterThanOrEqual(summary.startedAt.getTime());
      const [f, b] = [keyOf(full), keyOf(bare)];
      expect(await snapshotsOf(summary.runId)).toEqual(
        [`flavor/${f}`, `flavor/${b}`, `instance/${f}`, `keypair/${f}`, `keypair/${b}`, `port/${f}`].sort(),
      );
    });

    it('gives back the staging tables of every collector it ran, failed units included', async () => {
      const sizes = await db.query<{ relname: string; bytes: string }>(
        `SELECT relname, pg_relation_size(oid)::text AS bytes FROM pg_class
          WHERE relname IN ('gpu_flavors_staged', 'instances_staged', 'keypairs_staged', 'instance_ports_staged') ORDER BY relname`,
      );
      expect(sizes).toEqual(['gpu_flavors_staged', 'instance_ports_staged', 'instances_staged', 'keypairs_staged'].map((relname) => ({ relname, bytes: '0' })));
    });

    it('reports every unit once, and starts a phase only when the one before has ended', () => {
      expect(events[0]).toEqual({ type: 'run-started', runId: summary.runId, collectors: ['flavors', 'instances', 'keypairs', 'ports'], scopes: 3 });
      expect(events.at(-1)).toEqual({ type: 'run-finished', summary });
      const ends = events.filter((e) => e.type === 'unit-done' || e.type === 'unit-failed' || e.type === 'unit-skipped');
      const [f, b] = [keyOf(full), keyOf(bare)];
      expect(ends.map((e) => `${e.collector} ${e.scope} ${e.type}`).sort()).toEqual(
        [
          `flavors ${f} unit-done`,
          `flavors ${b} unit-done`,
          `flavors ${MISSING_KEY} unit-failed`,
          `instances ${f} unit-done`,
          `instances ${b} unit-skipped`,
          `instances ${MISSING_KEY} unit-failed`,
          `keypairs ${f} unit-done`,
          `keypairs ${b} unit-done`,
          `keypairs ${MISSING_KEY} unit-failed`,
          `ports ${f} unit-done`,
          `ports ${b} unit-skipped`,
          `ports ${MISSING_KEY} unit-failed`,
        ].sort(),
      );
      expect(events.filter((e) => e.type === 'unit-skipped').map((e) => (e as { reason: string }).reason)).toEqual([
        'no security groups configured for this scope',
        'no security groups configured for this scope',
      ]);
      // Each started unit ends after it started; skipped units never start.
      const index = (type: string, collector: string, scope: string) => events.findIndex((e) => e.type === type && 'collector' in e && e.collector === collector && e.scope === scope);
      for (const e of ends) {
        const started = index('unit-started', e.collector, e.scope);
        if (e.type === 'unit-skipped') expect(started, `${e.collector} ${e.scope}`).toBe(-1);
        else expect(started, `${e.collector} ${e.scope}`).toBeLessThan(events.indexOf(e));
      }
      // Phases: prices, then inventory, then what derives from it.
      const positions = (collectors: string[], types: string[]) =>
        events.flatMap((e, i) => ('collector' in e && collectors.includes(e.collector) && types.includes(e.type) ? [i] : []));
      const lastEnd = (collectors: string[]) => Math.max(...positions(collectors, ['unit-done', 'unit-failed']));
      const firstStart = (collectors: string[]) => Math.min(...positions(collectors, ['unit-started']));
      expect(lastEnd(['flavors'])).toBeLessThan(firstStart(['instances', 'keypairs']));
      expect(lastEnd(['instances', 'keypairs'])).toBeLessThan(firstStart(['ports']));
    });
  });

  it('succeeds when every unit was skipped: nothing failed, nothing written', async () => {
    const summary = await runCollection({ ...base, scopes: [bare] }, { collectors: ['instances', 'ports', 'k8s_prices'] });
    expect(summary.status).toBe('succeeded');
    expect(summary.errors).toEqual([]);
    expect(summary.counts).toEqual({});
    expect(summary.perCollector.map((c) => [c.collector, c.scopesOk, c.scopesFailed, c.scopesSkipped, c.rows])).toEqual([
      ['k8s_prices', 0, 0, 1, 0],
      ['instances', 0, 0, 1, 0],
      ['ports', 0, 0, 1, 0],
    ]);
    expect((await runRow(summary.runId)).status).toBe('succeeded');
    expect(await snapshotsOf(summary.runId)).toEqual([]);
  });

  it('fails when every unit that ran failed, skipped ones aside', async () => {
    const summary = await runCollection({ ...base, scopes: [bare, MISSING] }, { collectors: ['instances', 'ports'] });
    expect(summary.status).toBe('failed');
    expect(summary.perCollector.map((c) => [c.collector, c.scopesOk, c.scopesFailed, c.scopesSkipped])).toEqual([
      ['instances', 0, 1, 1],
      ['ports', 0, 1, 1],
    ]);
    expect(summary.errors.map((e) => [e.collector, e.scope])).toEqual([
      ['instances', MISSING_KEY],
      ['ports', MISSING_KEY],
    ]);
    expect((await runRow(summary.runId)).status).toBe('failed');
  });

  it('fails a run asked to stop before it started, starting no unit and skipping the work after it', async () => {
    const stop = new AbortController();
    stop.abort();
    const events: ProgressEvent[] = [];
    const afterRun: Date[] = [];
    const summary = await runCollection(
      { ...base, scopes: [full, bare], afterRun: async (at) => void afterRun.push(at) },
      { collectors: ['flavors', 'keypairs'], signal: stop.signal, onProgress: (e) => events.push(e) },
    );
    expect(summary.status).toBe('failed');
    expect(summary.errors).toEqual([{ collector: '*', scope: '*', endpoint: '', status: null, message: STOPPED }]);
    expect(summary.perCollector.map((c) => [c.collector, c.scopesOk, c.scopesFailed, c.rows])).toEqual([
      ['flavors', 0, 2, 0],
      ['keypairs', 0, 2, 0],
    ]);
    expect(events.map((e) => e.type)).toEqual(['run-started', 'run-finished']);
    expect(afterRun).toEqual([]);
    const row = await runRow(summary.runId);
    expect(row.status).toBe('failed');
    expect(row.errors.map((e) => e.message)).toEqual([STOPPED]);
    expect(await snapshotsOf(summary.runId)).toEqual([]);
  });

  it('calls the work after the run once with its end, and a failure there does not change the run', async () => {
    const calls: Date[] = [];
    const summary = await runCollection(
      {
        ...base,
        scopes: [full],
        afterRun: async (at) => {
          calls.push(at);
          throw new Error('the alert mailer is down');
        },
      },
      { collectors: ['keypairs'] },
    );
    expect(summary.status).toBe('succeeded');
    expect(summary.errors).toEqual([]);
    expect(calls).toEqual([summary.finishedAt]);
    expect((await runRow(summary.runId)).status).toBe('succeeded');
  });

  it('is not disturbed by a progress listener that throws', async () => {
    let calls = 0;
    const summary = await runCollection(
      { ...base, scopes: [full] },
      {
        collectors: ['keypairs'],
        onProgress: () => {
          calls++;
          throw new Error('listener bug');
        },
      },
    );
    expect(summary.status).toBe('succeeded');
    expect(summary.perCollector.map((c) => [c.collector, c.scopesOk, c.scopesFailed])).toEqual([['keypairs', 1, 0]]);
    // run-started, unit-started, unit-done, run-finished: the listener was called for each.
    expect(calls).toBe(4);
    expect(await snapshotsOf(summary.runId)).toEqual([`keypair/${keyOf(full)}`]);
  });
});
