/**
 * The stop action on a database distributed by distributeTables on the Citus coordinator named by
 * TEST_CITUS_URL, and the same steps on plain Postgres (TEST_DATABASE_URL) or else PGlite, each
 * from its own simulator with the same demo data: the confirmation's plan, the stop through the
 * API with its audit rows, the status shown at once (instance_status_overrides), the audit log
 * report with the instance's name, and the override gone once a newer collection lists the
 * instance. Every answer is compared with the plain database's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeStop, loadInstancesByRef, planStop, type InstanceRef } from '../../src/actions/index.js';
import type { Database } from '../../src/db/connection.js';
import { auditReport } from '../../src/reports/audit.js';
import { CITUS_URL, citusSuiteTitle, openDistributedDatabase, type DistributedDatabase } from '../helpers/citus.js';
import { testDatabases } from '../helpers/databases.js';
import { clientOf, runningVms, seedFromSimulator, SIM_NOW, startTestSimulator, testConfig } from './helpers.js';

const config = testConfig();
const ACTOR = { name: 'olivia', role: 'operator' };

/** What each step gives on one database, times aside where they are the run's own clock. */
async function stopSteps(db: Database) {
  const sim = await startTestSimulator();
  const client = clientOf(sim);
  try {
    await seedFromSimulator(db, sim, config);
    const [a, b] = runningVms(sim);
    const refs: InstanceRef[] = [a!, b!].map((i) => ({ projectId: i.projectId, regionId: i.regionId, instanceId: i.id }));
    const plan = await planStop(db, refs);
    const result = await executeStop({ db, client, actor: ACTOR, reason: 'idle since March', dryRun: false, rules: config, now: () => SIM_NOW }, refs);
    const shown = await loadInstancesByRef(db, refs);
    const overrides = await db.query('select instance_id, project_id, region_id, status, changed_at from instance_status_overrides order by instance_id');
    const audit = await db.query('select actor, role, action, instance_id, project_id, region_id, reason, dry_run, result, error from audit_log order by id');
    const report = await auditReport.run({ db, config, now: SIM_NOW }, auditReport.params.parse({}), { limit: 50, offset: 0 });
    await seedFromSimulator(db, sim, config, new Date(SIM_NOW.getTime() + 3600_000));
    const after = { shown: await loadInstancesByRef(db, refs), overrides: await db.query('select * from instance_status_overrides') };
    return {
      plan: plan.items,
      outcomes: result.outcomes.map((o) => [o.ref.instanceId, o.result, o.newStatus]),
      shown,
      overrides,
      audit,
      reportRows: report.rows.map(({ at: _at, id: _id, ...row }) => row),
      after,
    };
  } finally {
    await client.close();
    await sim.close();
  }
}

describe.skipIf(!CITUS_URL)(citusSuiteTitle('the stop action on a distributed database'), () => {
  let citus: DistributedDatabase | undefined;
  let onCitus: Awaited<ReturnType<typeof stopSteps>>;
  let onPlain: Awaited<ReturnType<typeof stopSteps>>;
  const plainTarget = testDatabases().at(-1)!;

  beforeAll(async () => {
    const plain = await plainTarget.open();
    try {
      onPlain = await stopSteps(plain);
    } finally {
      await plain.close();
    }
    citus = await openDistributedDatabase(CITUS_URL!);
    onCitus = await stopSteps(citus.db);
  }, 300_000);

  afterAll(async () => {
    await citus?.close();
  });

  it(`plans, stops and audits two running instances as on ${plainTarget.name}`, () => {
    expect(onPlain.outcomes.map((o) => o[1])).toEqual(['stopped', 'stopped']);
    expect(onCitus.plan).toEqual(onPlain.plan);
    expect(onCitus.outcomes).toEqual(onPlain.outcomes);
    expect(onCitus.audit).toHaveLength(2);
    expect(onCitus.audit).toEqual(onPlain.audit);
  });

  it('shows them stopped at once, and the audit log report names them', () => {
    expect(onPlain.overrides).toHaveLength(2);
    expect(onCitus.shown).toEqual(onPlain.shown);
    expect(onCitus.overrides).toEqual(onPlain.overrides);
    expect(onPlain.reportRows.every((r) => typeof r.instance_name === 'string')).toBe(true);
    expect(onCitus.reportRows).toEqual(onPlain.reportRows);
  });

  it('drops the override once a newer collection lists them', () => {
    expect(onPlain.after.overrides).toEqual([]);
    expect(onCitus.after).toEqual(onPlain.after);
  });
});
