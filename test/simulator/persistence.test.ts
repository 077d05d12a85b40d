import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fileStore, startSimulator, type PersistenceOptions, type Simulator } from '../../src/simulator/index.js';
import { serializeCompany } from '../../src/simulator/persistence.js';

const NOW = new Date('2025-06-01T12:00:00Z');

/** The demo company of `npm start` kept in a file: a restart continues it, a bad file never stops it. */
describe('simulator persistence', () => {
  let dir: string;
  let file: string;
  const opened: Simulator[] = [];
  const warnings: Array<{ details: object; message: string }> = [];
  const log: PersistenceOptions['log'] = { warn: (details, message) => warnings.push({ details, message }), info: () => undefined };

  const start = async (options: { seed?: number; size?: number; persist?: boolean } = {}) => {
    const sim = await startSimulator({ seed: options.seed ?? 7, size: options.size ?? 40, taskDelayMs: 0, now: NOW }, options.persist === false ? undefined : { store: fileStore(file), log });
    opened.push(sim);
    return sim;
  };
  const stopOverHttp = async (sim: Simulator, id: string) => {
    const vm = sim.state.instance(id)!;
    const res = await fetch(`${sim.url}/cloud/v1/instances/${vm.projectId}/${vm.regionId}/${id}/stop`, { method: 'POST', headers: { authorization: `apikey ${sim.apiKey}` } });
    expect(res.status).toBe(200);
  };
  const text = (sim: Simulator) => serializeCompany(sim.state.saved(), new Date(0));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ct-sim-state-'));
    file = join(dir, 'nested', 'demo-simulator.json');
    warnings.length = 0;
  });
  afterEach(async () => {
    for (const sim of opened.splice(0)) await sim.close().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('saves a new company at once and continues it after a restart: changes, creation times and new ids', async () => {
    const first = await start();
    expect(first.persistence).toEqual({ where: file, outcome: 'fresh' });
    const [scope] = first.state.scopes();
    const vm = first.state.instances(scope!.project_id, scope!.region_id).find((i) => i.status === 'ACTIVE')!;
    await stopOverHttp(first, vm.id);
    first.state.addCluster(scope!.project_id, scope!.region_id, { name: 'kept-cluster', servers_count: 2, tags: { team: 'ml' } });
    first.state.setInstanceTag(vm.id, 'team', 'platform');
    first.state.setFlavorPrice(scope!.project_id, scope!.region_id, 'g3-ai-16-232-1600-l40s-48-1', '9.99');
    const before = text(first);
    await first.close();
    expect(existsSync(file)).toBe(true);
    expect(readdirTemporary()).toEqual([]);

    const second = await start();
    expect(second.persistence).toEqual({ where: file, outcome: 'restored' });
    expect(text(second)).toBe(before);
    expect(second.state.instance(vm.id)!.status).toBe('SHUTOFF');
    expect(second.state.clusters(scope!.project_id, scope!.region_id).map((c) => c.name)).toContain('kept-cluster');
    // The security groups list the same instances (membership is rebuilt from the instances).
    const groups = (s: Simulator) => s.state.securityGroups(scope!.project_id, scope!.region_id).map((g) => g.instances.map((i) => i.id));
    expect(groups(second)).toEqual(groups(first));
    expect(second.state.securityGroups(scope!.project_id, scope!.region_id)[0]!.instances[0]).toBe(
      second.state.instances(scope!.project_id, scope!.region_id).find((i) => i.id === groups(second)[0]![0]),
    );

    // New ids continue the generator where it stopped: the same as a simulator that never restarted.
    const unbroken = await start({ persist: false });
    const [p, r] = [scope!.project_id, scope!.region_id];
    const unbrokenVm = unbroken.state.instances(p, r).find((i) => i.status === 'ACTIVE')!;
    unbroken.state.stopInstance(p, r, unbrokenVm.id);
    unbroken.state.addCluster(p, r, { name: 'kept-cluster', servers_count: 2, tags: { team: 'ml' } });
    const next = second.state.addCluster(p, r, { name: 'after-restart' });
    const expected = unbroken.state.addCluster(p, r, { name: 'after-restart' });
    expect(next.id).toBe(expected.id);
    expect(new Set([...first.state.clusters(p, r)].map((c) => c.id)).has(next.id)).toBe(false);
  });

  it('saves after each change, before any shutdown (a crash loses nothing that was answered)', async () => {
    const sim = await start();
    await sim.close().then(() => opened.splice(0)); // the fresh company is on disk
    const again = await start();
    const [scope] = again.state.scopes();
    const vm = again.state.instances(scope!.project_id, scope!.region_id).find((i) => i.status === 'ACTIVE')!;
    await stopOverHttp(again, vm.id);
    await expect.poll(() => JSON.parse(readFileSync(file, 'utf8')).company.scopes[0].instances.find((i: { id: string }) => i.id === vm.id).status).toBe('SHUTOFF');
  });

  it('writes nothing back when it changed nothing (npm run collect beside a running npm start)', async () => {
    await (await start()).close();
    opened.splice(0);
    const reader = await start(); // e.g. `npm run collect`: reads the company, changes nothing
    const writer = await start(); // `npm start`, running meanwhile: a stop is saved
    const [scope] = writer.state.scopes();
    const vm = writer.state.instances(scope!.project_id, scope!.region_id).find((i) => i.status === 'ACTIVE')!;
    await stopOverHttp(writer, vm.id);
    await writer.close();
    await reader.close();
    opened.splice(0);
    const again = await start();
    expect(again.state.instance(vm.id)!.status).toBe('SHUTOFF');
  });

  it('replaces a corrupt or foreign file by a fresh company, saying why, and never fails the start', async () => {
    const fresh = text(await start({ persist: false }));
    mkdirSync(join(dir, 'nested'));
    for (const [what, content, problem] of [
      ['not JSON', '{"format": "cloudtally-demo-simu', /not JSON/],
      ['another file', JSON.stringify({ hello: 'world' }), /not a saved demo company \(format: /],
      ['a damaged company', () => readFileSync(file, 'utf8').replace('"status":"ACTIVE"', '"status":"EXPLODED"'), /not a saved demo company \(company\.scopes\.\d+\.instances\.\d+\.status/],
    ] as const) {
      const body = typeof content === 'function' ? content() : content;
      writeFileSync(file, body);
      const sim = await start();
      expect(sim.persistence?.outcome, what).toBe('replaced');
      expect(sim.persistence?.problem, what).toMatch(problem);
      expect(text(sim), what).toBe(fresh);
      expect(warnings.at(-1)?.message, what).toBe('saved demo company unusable: a new one replaces it');
      await sim.close();
      opened.splice(0);
      // The replacement is a good file.
      expect(JSON.parse(readFileSync(file, 'utf8')).format, what).toBe('cloudtally-demo-simulator');
    }
  });

  it('does not take over the company of another seed or size', async () => {
    await (await start({ seed: 7 })).close();
    opened.splice(0);
    const other = await start({ seed: 8 });
    expect(other.persistence?.outcome).toBe('replaced');
    expect(other.persistence?.problem).toBe('saved for seed 7 and size 40, but the simulator runs with seed 8 and size 40');
    await other.close();
    opened.splice(0);
    const bigger = await start({ seed: 8, size: 41 });
    expect(bigger.persistence?.problem).toContain('size 40');
  });

  it('keeps everything in memory without a file (npm run sim, tests)', async () => {
    const sim = await start({ persist: false });
    expect(sim.persistence).toBeUndefined();
    await sim.close();
    expect(existsSync(join(dir, 'nested'))).toBe(false);
  });

  function readdirTemporary(): string[] {
    return readdirSync(join(dir, 'nested')).filter((n) => n.endsWith('.tmp'));
  }
});
