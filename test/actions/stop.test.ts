import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addDecimal, executeStop, loadInstancesByRef, planStop, type InstanceRef } from '../../src/actions/index.js';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import type { SimInstance } from '../../src/simulator/model.js';
import { testDatabases } from '../helpers/databases.js';
import { clientOf, runningVms, seedFromSimulator, SIM_NOW, startTestSimulator, testConfig } from './helpers.js';

const config = testConfig();
const ACTOR = { name: 'olivia', role: 'operator' };

const refOf = (i: SimInstance): InstanceRef => ({ projectId: i.projectId, regionId: i.regionId, instanceId: i.id });
const stopPosts = (sim: Simulator) => sim.requestLog.filter((r) => r.method === 'POST' && r.path.endsWith('/stop'));

interface AuditRow extends Record<string, unknown> {
  actor: string;
  role: string;
  action: string;
  instance_id: string;
  project_id: number;
  region_id: number;
  reason: string;
  dry_run: boolean;
  result: string;
  error: string | null;
  task_ids: string[];
}

describe.each(testDatabases())('stop on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;

  beforeEach(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    await seedFromSimulator(db, sim, config);
  });
  afterEach(async () => {
    await client.close();
    await Promise.all([db.close(), sim.close()]);
  });

  const audit = () => db.query<AuditRow>('select actor, role, action, instance_id, project_id, region_id, reason, dry_run, result, error, task_ids from audit_log order by id');
  const stop = (refs: InstanceRef[], options: { dryRun?: boolean; concurrency?: number } = {}) =>
    executeStop({ db, client, actor: ACTOR, reason: 'idle since March', dryRun: options.dryRun ?? false, concurrency: options.concurrency, rules: config, now: () => SIM_NOW }, refs);

  it('stops running instances through the API, changes them in the cloud and audits each attempt', async () => {
    const [a, b] = runningVms(sim);
    sim.clearRequestLog();
    const result = await stop([refOf(a!), refOf(b!)]);

    expect(result.outcomes.map((o) => [o.ref.instanceId, o.result, o.newStatus])).toEqual([
      [a!.id, 'stopped', 'SHUTOFF'],
      [b!.id, 'stopped', 'SHUTOFF'],
    ]);
    expect(sim.state.instance(a!.id)!.status).toBe('SHUTOFF');
    expect(sim.state.instance(b!.id)!.status).toBe('SHUTOFF');
    expect(stopPosts(sim).map((r) => r.path).sort()).toEqual(
      [a!, b!].map((i) => `/cloud/v1/instances/${i.projectId}/${i.regionId}/${i.id}/stop`).sort(),
    );
    const rows = await audit();
    expect(rows).toHaveLength(2);
    for (const [row, instance] of [[rows[0]!, a!], [rows[1]!, b!]] as const) {
      expect(row).toMatchObject({ actor: 'olivia', role: 'operator', action: 'stop', instance_id: instance.id, project_id: instance.projectId, region_id: instance.regionId, dry_run: false, result: 'stopped', error: null });
      expect(row.reason).toMatch(/^idle since March/);
    }
    expect(result.counts).toMatchObject({ stopped: 2, failed: 0 });
  });

  it('shows the new status at once, until a newer snapshot lists the instance', async () => {
    const [a] = runningVms(sim);
    const before = await planStop(db, [refOf(a!)]);
    expect(before.items[0]).toMatchObject({ known: true, status: 'ACTIVE', running: true });

    await stop([refOf(a!)]);
    const after = await loadInstancesByRef(db, [refOf(a!)]);
    expect(after[0]).toMatchObject({ status: 'SHUTOFF', snapshotStatus: 'ACTIVE', running: false });
    expect(after[0]!.stoppedAt).toEqual(SIM_NOW);
    expect(await db.query('select instance_id, status from instance_status_overrides')).toEqual([{ instance_id: a!.id, status: 'SHUTOFF' }]);

    // The next collection (taken after the stop) says what the cloud says; the override is done.
    await seedFromSimulator(db, sim, config, new Date(SIM_NOW.getTime() + 3600_000));
    expect(await db.query('select * from instance_status_overrides')).toEqual([]);
    expect((await loadInstancesByRef(db, [refOf(a!)]))[0]).toMatchObject({ status: 'SHUTOFF', snapshotStatus: 'SHUTOFF', stoppedAt: null });
  });

  it('treats an instance already stopped, or gone, as a clear no-op and audits it', async () => {
    const stopped = sim.state.scopes().flatMap((s) => sim.state.instances(s.project_id, s.region_id)).find((i) => i.status === 'SHUTOFF')!;
    const [running] = runningVms(sim);
    const gone: InstanceRef = { projectId: running!.projectId, regionId: running!.regionId, instanceId: '00000000-0000-4000-8000-000000000000' };
    sim.clearRequestLog();

    const result = await stop([refOf(stopped), gone]);

    expect(result.outcomes.map((o) => o.result)).toEqual(['already_stopped', 'not_found']);
    expect(result.outcomes[0]!.message).toMatch(/already SHUTOFF: nothing to do/);
    expect(result.outcomes[1]!.message).toMatch(/no longer exists in the cloud: nothing to do/);
    // Nothing is sent for the one cloudtally knows is stopped; the unknown one is asked and answers 404.
    expect(stopPosts(sim).map((r) => [r.path, r.status])).toEqual([[`/cloud/v1/instances/${gone.projectId}/${gone.regionId}/${gone.instanceId}/stop`, 404]]);
    expect((await audit()).map((r) => [r.instance_id, r.result])).toEqual([
      [stopped.id, 'already_stopped'],
      [gone.instanceId, 'not_found'],
    ]);
  });

  it('leaves the others done and reported when one stop fails in the middle of a batch', async () => {
    const [a, b, c] = runningVms(sim);
    sim.injectFaults({ kind: 'status', status: 503, match: { method: 'POST', path: new RegExp(`/${b!.id}/stop$`) }, count: 5 });

    const result = await stop([refOf(a!), refOf(b!), refOf(c!)], { concurrency: 1 });

    expect(result.outcomes.map((o) => o.result)).toEqual(['stopped', 'failed', 'stopped']);
    expect(result.outcomes[1]!.error).toMatch(/stopInstance: POST .* answered 503/);
    expect([a, b, c].map((i) => sim.state.instance(i!.id)!.status)).toEqual(['SHUTOFF', 'ACTIVE', 'SHUTOFF']);
    const rows = await audit();
    expect(rows.map((r) => [r.instance_id, r.result])).toEqual([
      [a!.id, 'stopped'],
      [b!.id, 'failed'],
      [c!.id, 'stopped'],
    ]);
    expect(rows[1]!.error).toMatch(/503/);
    expect(rows[1]!.error).not.toContain(sim.apiKey);
    expect(result.counts).toMatchObject({ stopped: 2, failed: 1 });
  });

  it('changes nothing in the cloud on a dry run, and still lists and audits every instance', async () => {
    const [a, b] = runningVms(sim);
    sim.clearRequestLog();

    const result = await stop([refOf(a!), refOf(b!)], { dryRun: true });

    expect(result.outcomes.map((o) => o.result)).toEqual(['would_stop', 'would_stop']);
    expect(stopPosts(sim)).toEqual([]);
    expect(sim.requestLog.filter((r) => r.method === 'POST')).toEqual([]);
    expect([a, b].map((i) => sim.state.instance(i!.id)!.status)).toEqual(['ACTIVE', 'ACTIVE']);
    // The instances are planned concurrently: their audit rows may be written in either order.
    expect((await audit()).map((r) => [r.instance_id, r.dry_run, r.result])).toEqual(
      expect.arrayContaining([
        [a!.id, true, 'would_stop'],
        [b!.id, true, 'would_stop'],
      ]),
    );
    expect(await audit()).toHaveLength(2);
    expect(await db.query('select * from instance_status_overrides')).toEqual([]);
  });

  it('plans the exact instances with their status and the exact cost saved per currency', async () => {
    const priced = runningVms(sim).filter((i) => sim.state.flavors(i.projectId, i.regionId).some((f) => f.name === i.flavorName && f.pricePerHour !== null));
    const unpriced = runningVms(sim).find((i) => !sim.state.flavors(i.projectId, i.regionId).some((f) => f.name === i.flavorName && f.pricePerHour !== null))!;
    const chosen = priced.slice(0, 6);
    const expected = new Map<string, string>();
    for (const i of chosen) {
      const scope = sim.state.scopes().find((s) => s.project_id === i.projectId && s.region_id === i.regionId)!;
      const price = sim.state.flavors(i.projectId, i.regionId).find((f) => f.name === i.flavorName)!.pricePerHour!;
      expected.set(scope.currency_code, addDecimal(expected.get(scope.currency_code) ?? '0', price));
    }

    const plan = await planStop(db, [...chosen, unpriced].map(refOf));

    expect(plan.items.map((i) => i.ref.instanceId)).toEqual([...chosen, unpriced].map((i) => i.id));
    expect(plan.items.every((i) => i.known && i.status === 'ACTIVE')).toBe(true);
    expect(plan.unpricedRunning).toBe(1);
    expect(plan.items.at(-1)).toMatchObject({ pricePerHour: null, currency: null });
    expect(Object.fromEntries(plan.savings.map((s) => [s.currency, s.perHour]))).toEqual(Object.fromEntries(expected));
    for (const saving of plan.savings) {
      // Monthly = hourly x 730, exact (the flavors carry no monthly price here).
      const hourly = saving.perHour;
      let monthly = '0';
      for (let k = 0; k < 730; k++) monthly = addDecimal(monthly, hourly);
      expect(saving.perMonth).toBe(monthly);
    }
  });

  it('keeps the audit log append-only', async () => {
    const [a] = runningVms(sim);
    await stop([refOf(a!)], { dryRun: true });
    await expect(db.execute(`update audit_log set result = 'stopped'`)).rejects.toThrow(/append-only/);
    await expect(db.execute('delete from audit_log')).rejects.toThrow(/append-only/);
    expect((await audit()).map((r) => r.result)).toEqual(['would_stop']);
  });
});
