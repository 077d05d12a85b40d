import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createCloudClient, type CloudClient } from '../../src/cloud/client.js';
import { loadConfig, type Config } from '../../src/config/index.js';
import { normaliseTagKey } from '../../src/tags/normalise.js';
import { updatePresence } from '../../src/collect/presence.js';
import { bulkInsert } from '../../src/db/bulk.js';
import type { Database } from '../../src/db/connection.js';
import { gpuClusters, gpuClusterServers, gpuFlavors, instances, scopeKeyOf, instancesKept, gpuClusterServersKept, gpuClustersKept, gpuFlavorsKept } from '../../src/db/schema.js';
import { startSimulator, type Simulator } from '../../src/simulator/index.js';
import type { SimInstance } from '../../src/simulator/model.js';
import { listenOnFreePort } from '../helpers/listen.js';

/** The simulator's and the tests' "now": instance ages are relative to it. */
export const SIM_NOW = new Date('2024-05-17T10:30:00Z');

/** A simulator with the demo company and quick tasks. */
export function startTestSimulator(): Promise<Simulator> {
  return startSimulator({ seed: 42, size: 60, now: SIM_NOW, taskDelayMs: 20 });
}

/** A client of the simulator that does not retry (so an injected fault is seen as it is). */
export function clientOf(sim: Simulator, retries = false): CloudClient {
  return createCloudClient({
    baseUrl: sim.url,
    apiKey: sim.apiKey,
    timeoutMs: 5_000,
    retry: retries ? { maxAttempts: 3, baseDelayMs: 5, maxDelayMs: 20 } : { maxAttempts: 1 },
  });
}

/** A configuration from a file object (and env), as loadConfig makes it. */
export function testConfig(file: Record<string, unknown> = {}, env: Record<string, string> = {}): Config {
  return loadConfig({ CLOUDTALLY_CONFIG: '/test/cloudtally.json', ...env }, { readFile: () => JSON.stringify(file) });
}

function tagsOf(list: ReadonlyArray<{ key: string; value: string }>, config: Config): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const { key, value } of list) {
    const k = normaliseTagKey(key, config);
    if (!(k in tags)) tags[k] = value;
  }
  return tags;
}

function instanceRow(snapshotId: number, i: SimInstance, config: Config, regionName: string) {
  return {
    snapshotId,
    instanceId: i.id,
    name: i.name,
    status: i.status,
    vmState: i.status === 'ACTIVE' ? 'active' : 'stopped',
    flavorName: i.flavorName,
    projectId: i.projectId,
    regionId: i.regionId,
    region: regionName,
    createdAt: i.createdAt,
    securityGroupIds: i.securityGroupIds,
    tags: tagsOf(i.tags, config),
    raw: { id: i.id },
  };
}

/**
 * Writes one complete snapshot per scope of the simulator's current state (instances, clusters
 * with servers, GPU flavors with prices) taken at `takenAt`, the way the collectors would, so
 * these tests do not depend on the collectors; with their presence (first / last seen), which the
 * collectors write as each snapshot completes and the stops shown at once are ended by.
 */
export async function seedFromSimulator(db: Database, sim: Simulator, config: Config, takenAt: Date = SIM_NOW): Promise<void> {
  for (const scope of sim.state.scopes()) {
    const { project_id: projectId, region_id: regionId, region_name: regionName } = scope;
    const key = scopeKeyOf(projectId, regionId);
    await db.transaction(async (tx) => {
      const snapshot = async (kind: string) => {
        const rows = await tx.query<{ id: number }>(
          `insert into snapshots (kind, scope_key, project_id, region_id, taken_at, complete) values ($1, $2, $3, $4, $5, true) returning id`,
          [kind, key, projectId, regionId, takenAt.toISOString()],
        );
        return rows[0]!.id;
      };
      const instanceSnapshot = await snapshot('instance');
      await bulkInsert(tx, instancesKept, sim.state.instances(projectId, regionId).map((i) => instanceRow(instanceSnapshot, i, config, regionName)));

      const clusterSnapshot = await snapshot('cluster');
      const clusters = sim.state.clusters(projectId, regionId);
      await bulkInsert(
        tx,
        gpuClustersKept,
        clusters.map((c) => ({
          snapshotId: clusterSnapshot,
          clusterId: c.id,
          clusterName: c.name,
          clusterStatus: c.status,
          taskStatus: c.taskStatus,
          flavorName: c.flavorName,
          projectId,
          regionId,
          region: regionName,
          createdAt: c.createdAt,
          serverCount: c.servers.length,
          tags: tagsOf(c.tags, config),
          raw: { id: c.id },
        })),
      );
      await bulkInsert(
        tx,
        gpuClusterServersKept,
        clusters.flatMap((c) =>
          c.servers.map((s) => ({
            snapshotId: clusterSnapshot,
            clusterId: c.id,
            serverId: s.id,
            name: s.name,
            status: s.status,
            flavorName: s.flavorName,
            projectId,
            regionId,
            region: regionName,
            createdAt: s.createdAt,
            tags: tagsOf(s.tags, config),
            raw: { id: s.id },
          })),
        ),
      );

      const flavorSnapshot = await snapshot('flavor');
      await bulkInsert(
        tx,
        gpuFlavorsKept,
        sim.state.flavors(projectId, regionId).map((f) => ({
          snapshotId: flavorSnapshot,
          flavorId: f.name,
          flavorName: f.name,
          disabled: f.disabled,
          currencyCode: f.pricePerHour === null ? null : f.currency,
          pricePerHour: f.pricePerHour,
          // The monthly price is left out on purpose: the API may omit it, and hourly x 730 is then used.
          projectId,
          regionId,
          raw: { flavor_name: f.name },
        })),
      );
      for (const [id, kind] of [[instanceSnapshot, 'instance'], [clusterSnapshot, 'cluster'], [flavorSnapshot, 'flavor']] as const) {
        await updatePresence(tx, { id, kind, scopeKey: key, takenAt });
      }
    });
  }
}

/** Running VM instances of the simulator, in a stable order. */
export function runningVms(sim: Simulator): SimInstance[] {
  return sim.state
    .scopes()
    .flatMap((s) => sim.state.instances(s.project_id, s.region_id))
    .filter((i) => i.status === 'ACTIVE');
}

export interface WebhookReceiver {
  url: string;
  received: Array<{ text: string }>;
  /** Status to answer with (200 by default); a function decides per request. */
  answer: number | (() => number);
  /** Never answer (to test timeouts). */
  hang: boolean;
  /** Resolves when at least n messages have arrived. */
  waitFor(n: number): Promise<void>;
  close(): Promise<void>;
}

/** A local Slack-like webhook (node:http on 127.0.0.1:0) recording each {text} posted. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    answer: 200,
    hang: false,
    waitFor: (n) =>
      receiver.received.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve })),
    close: async () => undefined,
  };
  const server: Server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      if (receiver.hang) return;
      const status = typeof receiver.answer === 'function' ? receiver.answer() : receiver.answer;
      if (status >= 200 && status < 300) {
        receiver.received.push(JSON.parse(body) as { text: string });
        for (const w of waiters.splice(0)) {
          if (receiver.received.length >= w.n) w.resolve();
          else waiters.push(w);
        }
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : 'nope');
    });
  });
  const listening = await listenOnFreePort(server);
  receiver.url = `${listening.url}/services/T000/B000/secret-token`;
  receiver.close = listening.close;
  return receiver;
}
