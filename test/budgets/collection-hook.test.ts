/**
 * The alerts run where the complete days are closed: after each collection run. Real collections
 * from the simulator into the database; a small EUR budget on the total (50) is reached once the second
 * run has priced two hours of the first one's snapshot, and alerts once however many runs follow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetAlertsAfterRun } from '../../src/budgets/alerts.js';
import type { CloudClient } from '../../src/cloud/index.js';
import { runCollection } from '../../src/collect/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startTestSimulator, testClient, testConfig, testDeps } from '../collect/helpers.js';
import { testDatabases } from '../helpers/databases.js';

const T = new Date('2025-06-01T12:00:00Z');
const hours = (n: number) => new Date(T.getTime() + n * 3_600_000);

describe.each(testDatabases())('budget alerts after collection runs on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  it('queues the alert after the run that reaches the budget, and only once', async () => {
    const config = testConfig({ budgets: [{ name: 'Tiny', currency: 'EUR', amount_per_month: '50', thresholds: [100], notify: ['finance-mail'] }] });
    client = testClient(sim, config);
    const deps = testDeps(db, sim, client, config, { afterRun: budgetAlertsAfterRun({ db, config, logger: silentLogger() }) });
    const keys = async () => (await db.query<{ key: string }>('select key from notify_messages order by key')).map((r) => r.key);
    const collectors = ['flavors', 'clusters', 'instances', 'k8s_prices'] as const;

    await runCollection(deps, { trigger: 'manual', collectors: [...collectors], now: T });
    expect(await keys()).toEqual([]); // the first snapshot has cost only the seconds the run took
    await runCollection(deps, { trigger: 'manual', collectors: [...collectors], now: hours(2) });
    expect(await keys()).toEqual(['budget:config:Tiny:2025-06:actual:100']);
    await runCollection(deps, { trigger: 'manual', collectors: [...collectors], now: hours(4) });
    expect(await keys()).toEqual(['budget:config:Tiny:2025-06:actual:100']);
  }, 120_000);
});
