/**
 * Scheduled delivery (section 6) on both databases: the monthly report's CSV for one slot, mailed
 * (attachment checked against figures worked out by hand in test/reports/periods-fixture.ts) and
 * posted to a webhook with a link and totals; delivered once when two services claim the slot;
 * its status in collection health.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig, type Config } from '../../src/config/index.js';
import type { Database } from '../../src/db/connection.js';
import { silentLogger } from '../../src/logger.js';
import { createDeliveryScheduler } from '../../src/notify/deliveries.js';
import { createDispatcher } from '../../src/notify/dispatcher.js';
import { allReports } from '../../src/reports/index.js';
import type { ReportDefinition } from '../../src/reports/report.js';
import { testDatabases } from '../helpers/databases.js';
import { startReportsApp } from '../reports/helpers.js';
import { seedPeriods } from '../reports/periods-fixture.js';
import { startSmtpReceiver, startWebhookReceiver, type SmtpReceiver, type WebhookReceiver } from './helpers.js';

const reports = allReports() as ReportDefinition<unknown, unknown, unknown>[];
const SLOT = new Date('2025-03-01T07:00:00Z');

function configFor(smtp: SmtpReceiver, hook: WebhookReceiver): Config {
  return loadConfig(
    { CLOUDTALLY_CONFIG: 'c.json', CLOUDTALLY_SMTP_URL: smtp.url, CLOUDTALLY_PUBLIC_URL: 'https://cloudtally.example.com' },
    {
      reports,
      hostname: 'ct-test',
      readFile: () =>
        JSON.stringify({
          cost_max_gap_hours: 24,
          channels: [
            { name: 'finance-hook', type: 'webhook', url: hook.url, allow_private_network: true },
            { name: 'finance-mail', type: 'email', to: ['finance@example.com'], allow_private_network: true },
          ],
          deliveries: [
            { name: 'monthly-by-team', report: 'monthly', params: { by: 'tag:team', period: '2025-02' }, schedule: '0 7 1 * *', notify: ['finance-mail', 'finance-hook'] },
          ],
        }),
    },
  );
}

describe.each(testDatabases())('scheduled delivery on $name', ({ open }) => {
  let db: Database;
  let smtp: SmtpReceiver;
  let hook: WebhookReceiver;

  beforeAll(async () => {
    [db, smtp, hook] = await Promise.all([open(), startSmtpReceiver(), startWebhookReceiver()]);
    await seedPeriods(db);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([db?.close(), smtp?.close(), hook?.close()]);
  });

  it('delivers the monthly CSV of a slot once, even when two services claim it', async () => {
    const config = configFor(smtp, hook);
    const one = createDeliveryScheduler({ db, config, reports, logger: silentLogger(), claimant: 'replica-a' });
    const two = createDeliveryScheduler({ db, config, reports, logger: silentLogger(), claimant: 'replica-b' });
    const results = await Promise.all([one.deliverSlot(0, SLOT), two.deliverSlot(0, SLOT)]);
    expect([...results].sort()).toEqual(['claimed-elsewhere', 'enqueued']);
    // The winner asked again (node-cron retried, a restart): the slot's key is already queued.
    const winner = results[0] === 'enqueued' ? one : two;
    expect(await winner.deliverSlot(0, SLOT)).toBe('already-enqueued');

    const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
    expect(await dispatcher.dispatch(new Date())).toEqual({ sent: 2, retrying: 0, failed: 0 });
    dispatcher.close();

    expect(smtp.mails).toHaveLength(1);
    const mail = smtp.mails[0]!;
    expect(mail.from).toBe('cloudtally@ct-test');
    expect(mail.subject).toBe('cloudtally: monthly-by-team (2025-03-01)');
    expect(mail.attachments).toHaveLength(1);
    const csv = mail.attachments[0]!;
    expect(csv.filename).toBe('cloudtally-monthly-by-tag-team_period-2025-02-2025-03-01-partial.csv');
    expect(csv.contentType).toBe('text/csv');
    // The same CSV as the web export of the same report and parameters (one CSV writer), computed as of the slot.
    const app = await startReportsApp(() => ({ db, config, now: SLOT }));
    try {
      const web = await request(`${app.base}/api/reports/monthly.csv?by=tag:team&period=2025-02`);
      expect(csv.content.equals(Buffer.from(await web.body.arrayBuffer()))).toBe(true);
    } finally {
      await app.close();
    }
    // Worked out by hand in periods-fixture.ts: February has 26 covered days (02-10 and 02-11
    // missing, hence "-partial"): ml 26 x 60 = 1560 EUR, web 26 x 96 = 2496 EUR, web 17 x 72 = 1224 USD.
    // The fixture's flavors carry no hardware description, so no GPU count can be read: GPU-hours
    // unknown (empty), each group's resource hours under "GPU count unknown" (26 x 24 = 624, 17 x 24 = 408).
    expect(csv.content.toString('utf8')).toBe(
      [
        // The month's label says how much of it the snapshots cover, and the total that it is of those hours.
        // The change against January, covered 384 of 744 h (collection began 01-16), is not given.
        '\uFEFFtag team,Currency,2025-02 (covered 624 of 672 h),Total (covered hours only),GPU-hours,Cost per GPU-hour,Hours with GPU count unknown,Change % 2025-02 vs 2025-01 (not given: 2025-01 covered 384 of 744 h)',
        'web,EUR,2496.00,2496.00,,,624.00,',
        'ml,EUR,1560.00,1560.00,,,624.00,',
        'web,USD,1224.00,1224.00,,,408.00,',
        'Total,EUR,4056.00,4056.00,,,1248.00,',
        'Total,USD,1224.00,1224.00,,,408.00,',
        '',
      ].join('\r\n'),
    );
    const link = 'https://cloudtally.example.com/reports/monthly?by=tag%3Ateam&period=2025-02';
    expect(mail.text).toContain('Spend per month (by=tag:team, period=2025-02), as of 2025-03-01T07:00:00.000Z: 3 rows (the period is not fully covered by snapshots).');
    expect(mail.text).toContain(link);

    // The webhook gets the link and a summary (totals per currency), not the file.
    expect(hook.posts).toHaveLength(1);
    const body = JSON.parse(hook.posts[0]!.body) as { key: string; link: string; text: string; data: Record<string, unknown> };
    expect(body.key).toBe('delivery:monthly-by-team:2025-03-01T07:00:00.000Z');
    expect(body.link).toBe(link);
    expect(body.text).toContain('Total: 2025-02 (covered 624 of 672 h) 4056.00 EUR, Total (covered hours only) 4056.00 EUR\nTotal: 2025-02 (covered 624 of 672 h) 1224.00 USD, Total (covered hours only) 1224.00 USD');
    expect(body.data).toMatchObject({
      kind: 'delivery',
      delivery: 'monthly-by-team',
      report: 'monthly',
      params: { by: 'tag:team', period: '2025-02' },
      slot: '2025-03-01T07:00:00.000Z',
      rows: 3,
      partial: true,
      totals: [
        { currency: 'EUR', '2025-02': '4056.00', total: '4056.00' },
        { currency: 'USD', '2025-02': '1224.00', total: '1224.00' },
      ],
      csv_url: 'https://cloudtally.example.com/api/reports/monthly.csv?by=tag%3Ateam&period=2025-02',
    });
    expect(JSON.stringify(body)).not.toContain('2496.00,2496.00'); // no CSV in the webhook
  });

  it('shows the last delivery of each scheduled delivery in collection health', async () => {
    const config = configFor(smtp, hook);
    const app = await startReportsApp(() => ({ db, config, now: new Date() }));
    try {
      const res = await request(`${app.base}/api/reports/collection-health?view=deliveries`);
      expect(res.statusCode).toBe(200);
      const json = (await res.body.json()) as { rows: Array<Record<string, unknown>> };
      expect(json.rows).toEqual([
        {
          delivery: 'monthly-by-team',
          report: 'monthly',
          schedule: '0 7 1 * *',
          channels: 'finance-mail, finance-hook',
          last_slot: '2025-03-01T07:00:00.000Z',
          status: 'sent',
          detail: 'finance-hook: sent (1 attempt); finance-mail: sent (1 attempt)',
        },
      ]);
      const page = await request(`${app.base}/reports/collection-health?view=deliveries`);
      expect(page.statusCode).toBe(200);
      const html = await page.body.text();
      expect(html).toContain('Scheduled deliveries');
      expect(html).toContain('monthly-by-team');
    } finally {
      await app.close();
    }
  });

  it('runs on its cron schedule: two services ticking every second enqueue each slot once', async () => {
    const config = loadConfig(
      { CLOUDTALLY_CONFIG: 'c.json', CLOUDTALLY_SMTP_URL: smtp.url },
      {
        reports,
        readFile: () =>
          JSON.stringify({
            channels: [{ name: 'finance-mail', type: 'email', to: ['finance@example.com'], allow_private_network: true }],
            deliveries: [{ report: 'collection-health', schedule: '* * * * * *', notify: ['finance-mail'] }],
          }),
      },
    );
    const services = ['replica-a', 'replica-b'].map((claimant) => createDeliveryScheduler({ db, config, reports, logger: silentLogger(), claimant }));
    const keys = () => db.query<{ key: string }>("select key from notify_messages where key like 'delivery:0:%' order by key");
    for (const s of services) s.start();
    try {
      await vi.waitFor(async () => expect((await keys()).length).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 100 });
    } finally {
      await Promise.all(services.map((s) => s.stop()));
    }
    const found = (await keys()).map((k) => k.key);
    expect(found.length).toBeGreaterThanOrEqual(2);
    // Each queued slot was claimed (once: the claim key is unique) by one of the two services.
    const claims = new Map(
      (await db.query<{ key: string; claimed_by: string }>("select key, claimed_by from schedule_claims where key like 'delivery-0@%'")).map((c) => [c.key, c.claimed_by]),
    );
    for (const key of found) {
      expect(key).toMatch(/^delivery:0:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
      expect(['replica-a', 'replica-b']).toContain(claims.get(`delivery-0@${key.slice('delivery:0:'.length)}`));
    }
  });

  it('sends the FOCUS export with its dataset metadata: a file beside the CSV in mail, the document in the webhook', async () => {
    const config = loadConfig(
      { CLOUDTALLY_CONFIG: 'c.json', CLOUDTALLY_SMTP_URL: smtp.url, CLOUDTALLY_PUBLIC_URL: 'https://cloudtally.example.com' },
      {
        reports,
        hostname: 'ct-test',
        readFile: () =>
          JSON.stringify({
            cost_max_gap_hours: 24,
            channels: [
              { name: 'finance-hook', type: 'webhook', url: hook.url, allow_private_network: true },
              { name: 'finance-mail', type: 'email', to: ['finance@example.com'], allow_private_network: true },
            ],
            deliveries: [{ name: 'focus-monthly', report: 'focus', params: { period: '2025-02' }, schedule: '0 7 1 * *', notify: ['finance-mail', 'finance-hook'] }],
          }),
      },
    );
    const scheduler = createDeliveryScheduler({ db, config, reports, logger: silentLogger(), claimant: 'replica-focus' });
    expect(await scheduler.deliverSlot(0, SLOT)).toBe('enqueued');
    const dispatcher = createDispatcher({ db, config, logger: silentLogger() });
    // (The cron test's slots, still queued, go out too.)
    expect(await dispatcher.dispatch(new Date())).toMatchObject({ retrying: 0, failed: 0 });
    dispatcher.close();

    const app = await startReportsApp(() => ({ db, config, now: SLOT }));
    let metadata: { Schema: Array<{ FocusVersion: string; SchemaId: string }> };
    try {
      metadata = (await (await request(`${app.base}/api/reports/focus/metadata`)).body.json()) as typeof metadata;
    } finally {
      await app.close();
    }
    const schemaId = metadata.Schema[0]!.SchemaId;
    expect(metadata.Schema[0]!.FocusVersion).toBe('1.2');

    const mail = smtp.mails.find((m) => m.subject.includes('focus-monthly'))!;
    expect(mail.attachments.map((a) => [a.filename, a.contentType])).toEqual([
      ['cloudtally-focus-period-2025-02-2025-03-01-partial.csv', 'text/csv'],
      ['cloudtally-focus-period-2025-02-2025-03-01-partial.metadata.json', 'application/json'],
    ]);
    expect(JSON.parse(mail.attachments[1]!.content.toString('utf8'))).toEqual(metadata);
    expect(mail.text).toContain(`Dataset metadata: X-FOCUS-Version 1.2, X-FOCUS-Schema-Id ${schemaId}`);
    expect(mail.text).toContain('https://cloudtally.example.com/api/reports/focus/metadata');

    const body = (hook.posts.map((p) => JSON.parse(p.body)) as Array<{ data: Record<string, unknown> }>).find((b) => b.data.delivery === 'focus-monthly')!;
    expect(body.data.metadata).toEqual(metadata);
    expect(body.data.metadata_url).toBe('https://cloudtally.example.com/api/reports/focus/metadata');
  });
});
