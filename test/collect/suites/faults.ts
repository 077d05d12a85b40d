import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CloudClient } from '../../../src/cloud/index.js';
import type { Config } from '../../../src/config/index.js';
import type { Database } from '../../../src/db/connection.js';
import type { RunError } from '../../../src/db/schema.js';
import { runCollectCommand, runCollection, runLockName, type CollectorDeps } from '../../../src/collect/index.js';
import type { Simulator } from '../../../src/simulator/index.js';
import { testDatabases, type TestDatabase } from '../../helpers/databases.js';
import { latestSnapshots, startTestSimulator, testClient, testConfig, testDeps } from '../helpers.js';

export function faultsSuite(databases: TestDatabase[] = testDatabases()): void {
  describe('faults', () => {
    const MISSING_PROJECT = { projectId: 999_999, regionId: 38, securityGroups: ['5c1d0b6e-0000-4000-8000-000000000001'], k8sClusters: ['nowhere'] };

    function output(): { stream: PassThrough; text: () => string } {
      const stream = new PassThrough();
      let text = '';
      stream.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      return { stream, text: () => text };
    }

    describe.each(databases)('faults during a collection ($name)', ({ open }) => {
      let sim: Simulator;
      let config: Config;
      let client: CloudClient;
      let db: Database;
      let deps: CollectorDeps;
      let good: Map<string, number>;
      let after: Map<string, number>;
      let run2: { id: number; status: string; errors: RunError[]; counts: Record<string, number> };
      let exitCode: number;
      let printed: string;

      beforeAll(async () => {
        sim = await startTestSimulator({ seed: 23 });
        config = testConfig();
        client = testClient(sim, config);
        db = await open();
        const base = testDeps(db, sim, client, config);
        const run1 = await runCollection(base);
        expect(run1.status).toBe('succeeded');
        good = await latestSnapshots(db);

        deps = { ...base, scopes: [...base.scopes, MISSING_PROJECT], freeFeatureIds: [...base.freeFeatureIds!, 4242] };
        sim.injectFaults(
          // Bursts of 429 with Retry-After and transient 503s: retried, then fine.
          { match: { path: /\/securitygroups\/380101\/76\// }, kind: 'status', status: 429, retryAfterSeconds: 1, count: 2 },
          { match: { path: /\/storage\/provisioning\/v2\/key/ }, kind: 'status', status: 503, count: 2 },
          { match: { path: /\/ai\/flavors\/380103\/120/ }, kind: 'status', status: 429, retryAfterSeconds: 1, count: 1 },
          // Lasting faults: more than the client's attempts.
          { match: { path: /\/ai\/clusters\/380102\/76/ }, kind: 'status', status: 503, count: 20 },
          { match: { path: /\/keypairs\/380101\/38/ }, kind: 'truncate', count: 20 },
        );
        const out = output();
        exitCode = await runCollectCommand(deps, { out: out.stream });
        printed = out.text();
        const [row] = await db.query<{ id: number; status: string; errors: RunError[]; counts: Record<string, number> }>(
          'SELECT id, status, errors, counts FROM collection_runs ORDER BY id DESC LIMIT 1',
        );
        run2 = row!;
        after = await latestSnapshots(db);
      });
      afterAll(async () => {
        await db?.close();
        await client?.close();
        await sim?.close();
      });

      const errorFor = (collector: string, scope: string) => run2.errors.filter((e) => e.collector === collector && e.scope === scope);

      it('ends partial, with exit code 2 and the errors listed on the terminal', () => {
        expect(run2.status).toBe('partial');
        expect(exitCode).toBe(2);
        expect(printed).toMatch(/run #\d+ PARTIAL/);
        expect(printed).toContain('FAILED  clusters      p380102-r76');
        expect(printed).toMatch(/errors \(\d+\):/);
        expect(printed).toMatch(/collector\s+scopes ok\s+failed\s+skipped\s+rows\s+duration/);
      });

      it('records each failing endpoint with its collector, scope and status', () => {
        const clusters = errorFor('clusters', 'p380102-r76');
        expect(clusters).toHaveLength(1);
        expect(clusters[0]).toMatchObject({ endpoint: expect.stringMatching(/^GET \/cloud\/v2\/ai\/clusters\/380102\/76\?limit=100&offset=0$/), status: 503 });
        const keypairs = errorFor('keypairs', 'p380101-r38');
        expect(keypairs).toHaveLength(1);
        expect(keypairs[0]!.endpoint).toBe('GET /cloud/v1/keypairs/380101/38');
        for (const collector of ['clusters', 'instances', 'keypairs', 'flavors', 'k8s_prices']) {
          const missing = errorFor(collector, 'p999999-r38');
          expect(missing, collector).toHaveLength(1);
          expect(missing[0]).toMatchObject({ status: 404, endpoint: expect.stringContaining('/999999/38') });
        }
        // Ports and image tags have no inventory of that scope to work from.
        expect(errorFor('ports', 'p999999-r38')[0]!.message).toMatch(/no complete instance snapshot/);
        expect(errorFor('image_tags', 'p999999-r38')[0]!.message).toMatch(/no complete cluster snapshot/);
        // One unknown free feature id: an error for that id, the others stored.
        expect(errorFor('free_features', 'global')).toEqual([
          expect.objectContaining({ endpoint: 'GET /cdn/admin/free_features/4242', status: 404 }),
        ]);
        expect(run2.counts['free_feature']).toBe(sim.state.freeFeatures().length);
        // Retried faults left no error behind.
        expect(run2.errors.filter((e) => e.scope === 'p380101-r76' || e.collector === 'storage_keys' || e.collector === 'flavors' && e.scope === 'p380103-r120')).toEqual([]);
      });

      it('completes the other scopes and keeps the previous good snapshot the latest where a scope failed', async () => {
        const runOf = async (id: number) => (await db.query<{ run_id: number }>('SELECT run_id FROM snapshots WHERE id = $1', [id]))[0]!.run_id;
        expect(after.get('cluster/p380102-r76')).toBe(good.get('cluster/p380102-r76'));
        expect(after.get('keypair/p380101-r38')).toBe(good.get('keypair/p380101-r38'));
        for (const [key, id] of after) {
          if (key === 'cluster/p380102-r76' || key === 'keypair/p380101-r38') continue;
          expect(await runOf(id), key).toBe(run2.id);
        }
        expect([...after.keys()].filter((k) => k.includes('999999'))).toEqual([]);
        expect(await db.query('SELECT id FROM snapshots WHERE NOT complete')).toEqual([]);
        // Nothing was marked gone for the failed scope.
        expect(await db.query(`SELECT resource_id FROM resource_presence WHERE gone_at IS NOT NULL AND kind <> 'free_feature'`)).toEqual([]);
      });

      it('fails (exit 1) when every scope fails, and refuses to start (exit 3) while another run is running', async () => {
        const failing = { ...deps, scopes: [MISSING_PROJECT], freeFeatureIds: [] };
        const out = output();
        expect(await runCollectCommand(failing, { out: out.stream, collectors: ['clusters', 'keypairs'] })).toBe(1);
        expect(out.text()).toMatch(/FAILED/);

        const [running] = await db.query<{ id: number }>(
          `INSERT INTO collection_runs (trigger, collectors, runner_id) VALUES ('schedule', '{clusters}', 'other-replica:1') RETURNING id`,
        );
        // The other replica is alive: it holds its run's lock.
        const held = await db.holdAdvisoryLock(runLockName(running!.id));
        const busy = output();
        try {
          expect(await runCollectCommand(deps, { out: busy.stream })).toBe(3);
        } finally {
          await held?.release();
        }
        expect(busy.text()).toContain(`run #${running!.id}`);
        await db.execute(`UPDATE collection_runs SET status = 'failed' WHERE id = $1`, [running!.id]);

        const ok = output();
        expect(await runCollectCommand(deps, { out: ok.stream, collectors: ['storage_keys'] })).toBe(0);
        expect(ok.text()).toMatch(/SUCCEEDED/);
      });
    });
  });
}
