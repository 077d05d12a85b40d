/**
 * "What changed" links a change that a stop through cloudtally caused to its audit entry, with who
 * and why: a real stop against the simulator, the next collection's snapshot, and the changes
 * report over HTTP (HTML, JSON and CSV).
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeStop } from '../../src/actions/index.js';
import type { CloudClient } from '../../src/cloud/client.js';
import type { Database } from '../../src/db/connection.js';
import { createLogger } from '../../src/logger.js';
import { auditReport } from '../../src/reports/audit.js';
import { changesReport } from '../../src/reports/changes.js';
import type { Simulator } from '../../src/simulator/index.js';
import { createWebApp } from '../../src/web/app.js';
import { siteSettingsOf } from '../../src/web/site.js';
import { testDatabases } from '../helpers/databases.js';
import { listenOnFreePort } from '../helpers/listen.js';
import { parseCsv } from '../web/fixtures.js';
import { clientOf, runningVms, seedFromSimulator, SIM_NOW, startTestSimulator, testConfig } from './helpers.js';

const config = testConfig();
const STOPPED_AT = new Date(SIM_NOW.getTime() + 10 * 60_000);
const NEXT_SNAPSHOT = new Date(SIM_NOW.getTime() + 60 * 60_000);

describe.each(testDatabases())('changes caused by a stop on $name', ({ open }) => {
  let db: Database;
  let sim: Simulator;
  let client: CloudClient;
  let base: string;
  let close: () => Promise<void>;
  let stoppedId: string;
  let dryRunId: string;

  beforeAll(async () => {
    [db, sim] = await Promise.all([open(), startTestSimulator()]);
    client = clientOf(sim);
    await seedFromSimulator(db, sim, config, SIM_NOW);
    const [a, b] = runningVms(sim);
    stoppedId = a!.id;
    dryRunId = b!.id;
    const stop = (id: string, projectId: number, regionId: number, dryRun: boolean) =>
      executeStop({ db, client, actor: { name: 'olivia', role: 'operator' }, reason: 'idle GPUs, agreed with ml', dryRun, rules: config, now: () => STOPPED_AT }, [{ projectId, regionId, instanceId: id }]);
    await stop(a!.id, a!.projectId, a!.regionId, false);
    await stop(b!.id, b!.projectId, b!.regionId, true);
    await seedFromSimulator(db, sim, config, NEXT_SNAPSHOT);
    const app = createWebApp({
      reports: [changesReport, auditReport],
      context: () => ({ db, config, now: new Date(NEXT_SNAPSHOT.getTime() + 60_000) }),
      logger: createLogger({ level: 'silent' }),
      demo: true,
      site: siteSettingsOf(config),
    });
    ({ url: base, close } = await listenOnFreePort(app));
  });
  afterAll(async () => {
    await close?.();
    await client?.close();
    await Promise.all([db?.close(), sim?.close()]);
  });

  const get = async (path: string) => {
    const res = await request(`${base}${path}`);
    return { status: res.statusCode, body: await res.body.text() };
  };
  const query = `kind=instances&since=${encodeURIComponent(SIM_NOW.toISOString())}`;

  it('says who stopped it and why, linked to the audit entry, in JSON, CSV and HTML', async () => {
    const json = await get(`/api/reports/changes?${query}`);
    expect(json.status, json.body).toBe(200);
    const rows = (JSON.parse(json.body) as { rows: Array<Record<string, unknown>> }).rows;
    const stopped = rows.find((r) => r.resource_id === stoppedId)!;
    expect(stopped.change).toBe('changed');
    expect(stopped.stopped_by).toMatch(/^olivia: idle GPUs, agreed with ml \(2024-05-17 10:40 UTC, audit #\d+\)$/);
    const href = String(stopped.stop_href);
    expect(href).toBe(`/reports/audit?instance=${stoppedId}&action=stop&from=2024-05-17&to=2024-05-17`);
    // A dry run changed nothing in the cloud and is no cause of a change.
    expect(rows.find((r) => r.resource_id === dryRunId)).toBeUndefined();
    for (const row of rows) if (row.resource_id !== stoppedId) expect(row.stopped_by).toBeNull();

    // The link opens the audit log on that entry.
    const audit = await get(`/api/reports/audit?${href.split('?')[1]}`);
    const entries = (JSON.parse(audit.body) as { rows: Array<Record<string, unknown>> }).rows;
    expect(entries.map((e) => [e.instance_id, e.actor, e.result])).toEqual([[stoppedId, 'olivia', 'stopped']]);
    expect(String(stopped.stopped_by)).toContain(`audit #${String(entries[0]!.id)}`);

    const csv = parseCsv((await get(`/api/reports/changes.csv?${query}`)).body);
    const column = csv[0]!.indexOf('Stopped through cloudtally');
    expect(column).toBeGreaterThan(-1);
    expect(csv.find((r) => r.includes(stoppedId))![column]).toBe(String(stopped.stopped_by));

    const html = await get(`/reports/changes?${query}`);
    expect(html.body).toContain(`<a href="${href.replace(/&/g, '&amp;')}">olivia: idle GPUs, agreed with ml`);
  });

  it('has no such column where cloudtally stops nothing', async () => {
    const json = JSON.parse((await get('/api/reports/changes?kind=keypairs')).body) as { columns: Array<{ key: string }> };
    expect(json.columns.map((c) => c.key)).not.toContain('stopped_by');
  });
});
