/**
 * The notification service as the composition root runs it: scheduled deliveries on their cron,
 * the dispatcher on its interval and on demand (after a collection), and a clean stop.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { enqueueMessage } from '../../src/notify/outbox.js';
import { createNotifyService } from '../../src/notify/service.js';
import { allReports } from '../../src/reports/index.js';
import type { ReportDefinition } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { startWebhookReceiver, type WebhookReceiver } from './helpers.js';

const reports = allReports() as ReportDefinition<unknown, unknown, unknown>[];

async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`gave up waiting for ${what}`);
    },
    { timeout: 30_000, interval: 100 },
  );
}

describe.each(testDatabases())('notification service on $name', ({ open }) => {
  let db: Database;
  let hook: WebhookReceiver;
  beforeEach(async () => {
    [db, hook] = await Promise.all([open(), startWebhookReceiver()]);
  }, 60_000);
  afterEach(async () => {
    await Promise.all([db?.close(), hook?.close()]);
  });

  function service(deliveries: unknown[] = []) {
    const config = loadConfig(
      { CLOUDTALLY_CONFIG: 'c.json', CLOUDTALLY_PUBLIC_URL: 'https://cloudtally.example.com' },
      {
        reports,
        readFile: () =>
          JSON.stringify({
            channels: [{ name: 'ops-hook', type: 'webhook', url: hook.url, allow_private_network: true }],
            outbox: { interval_seconds: 1 },
            deliveries,
          }),
      },
    );
    return createNotifyService({ db, config, reports, logger: silentLogger() });
  }

  it('sends what producers queue when kicked (after a collection), and a scheduled report on its own', async () => {
    const notify = service([{ name: 'health', report: 'collection-health', params: { view: 'deliveries' }, schedule: '* * * * * *', notify: ['ops-hook'] }]);
    await enqueueMessage(db, { key: 'anomaly:tag:team:ml:2026-11-01', channels: ['ops-hook'], subject: 'Spend anomaly: ml', text: 'ml spent 3x its usual', data: {} });
    expect(await notify.kick()).toEqual({ sent: 1, retrying: 0, failed: 0 });
    expect(JSON.parse(hook.posts[0]!.body)).toMatchObject({ key: 'anomaly:tag:team:ml:2026-11-01', subject: 'Spend anomaly: ml' });

    notify.start();
    try {
      await until(() => hook.posts.some((p) => (JSON.parse(p.body) as { key: string }).key.startsWith('delivery:health:')), 'the scheduled report');
    } finally {
      await notify.stop();
    }
    const delivered = hook.posts.map((p) => JSON.parse(p.body) as { key: string; link: string; data: { report: string } }).find((p) => p.key.startsWith('delivery:health:'))!;
    expect(delivered.link).toBe('https://cloudtally.example.com/reports/collection-health?view=deliveries');
    expect(delivered.data.report).toBe('collection-health');
    // Stopped: kicks send nothing any more.
    expect(await notify.kick()).toBeNull();
  });
});
