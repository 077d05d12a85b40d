/**
 * Log lines stay short whatever the cloud answers: a keypair list holding thousands of repeated
 * names is logged as a count and a few examples, never as the whole list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCollection } from '../../src/collect/index.js';
import type { Database } from '../../src/db/connection.js';
import type { Simulator } from '../../src/simulator/index.js';
import { testDatabases } from '../helpers/databases.js';
import { memoryLogger } from '../ops/helpers.js';
import { startTestSimulator, testClient, testConfig, testDeps } from './helpers.js';

const REPEATS = 5_000;

describe.each(testDatabases())('log lines of a collection ($name)', ({ open }) => {
  let sim: Simulator;
  let db: Database;
  beforeAll(async () => {
    [sim, db] = await Promise.all([startTestSimulator(), open()]);
  });
  afterAll(async () => {
    await db?.close();
    await sim?.close();
  });

  it('a keypair list with thousands of repeated names logs a count and five examples, in one short line', async () => {
    const { project_id, region_id } = sim.state.scopes()[0]!;
    const keypairs = sim.state.keypairs(project_id, region_id);
    const first = keypairs[0]!;
    // Each copy is listed under a name of its own that is also listed once more: REPEATS repeats.
    for (let i = 0; i < REPEATS; i++) {
      const name = `${first.name}-${String(i).padStart(5, '0')}-${'x'.repeat(40)}`;
      keypairs.push({ ...first, name }, { ...first, name });
    }
    const config = testConfig();
    const client = testClient(sim, config);
    const { logger, text, entries } = memoryLogger('info');
    try {
      const summary = await runCollection({ ...testDeps(db, sim, client, config), logger }, { collectors: ['keypairs'] });
      expect(summary.status).toBe('succeeded');
    } finally {
      await client.close();
    }
    const longest = Math.max(...text().split('\n').map((line) => line.length));
    expect(longest).toBeLessThan(2_000);
    const warning = entries().find((e) => e.msg === 'keypair names listed more than once; the first of each was kept');
    expect(warning?.duplicates).toMatchObject({ count: REPEATS });
    expect((warning?.duplicates as { examples: string[] }).examples).toHaveLength(5);
  });
});
